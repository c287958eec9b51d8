// Records that carry their run but that no run's end appends to the history: those of a run that
// kept no history (DISAGG_HISTORY=off), and those of a replay (DEBUG_MODE) whose earlier run left
// no run context to keep (its numbers are that run's, not a new measurement). They still carry
// their run, so that `history import`, asked for them, keeps one run per run. A replay of a record
// that has its run keeps that run: appending it again adds nothing (the store holds that run and
// test), and a run killed before its end is still appended with its own id.
import type { Settings } from '../settings.ts';
import { findRecord, type RecordRunContext, type TestRecord } from '../results/json.ts';

/** Why a run's end leaves a record out (RecordRunContext.notAppended). */
export const NOT_APPENDED = {
  off: 'its run kept no history (DISAGG_HISTORY=off)',
  replay: "a replay (DEBUG_MODE) of logs whose run is not known: its numbers are an earlier run's",
} as const;

/** Whether a run's end appends this record (it carries a run that is not left out). */
export function appendedAtRunEnd(record: TestRecord): record is TestRecord & { run: RecordRunContext } {
  return record.run !== undefined && record.run.notAppended === undefined;
}

/**
 * A replayed record's run: the one its earlier record (same test, same job) carries, naming the
 * replay when it is another run; else this run's, left out.
 */
export async function replayedRunContext(settings: Pick<Settings, 'outputPath'>, runId: string, record: TestRecord, own: () => { run: RecordRunContext }): Promise<RecordRunContext> {
  const earlier = record.jobId === null ? undefined : await findRecord(settings.outputPath, record).catch(() => undefined);
  if (!earlier?.run) return { ...own().run, notAppended: NOT_APPENDED.replay };
  const { replayedBy: _, ...run } = earlier.run;
  return run.id === runId ? run : { ...run, replayedBy: runId };
}
