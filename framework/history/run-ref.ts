// How commands name a run: its id, its DISAGG_RUN_LABEL (the latest run with that label),
// `latest` / `previous`, or a results.json file (or a folder holding one).
import { stat } from 'node:fs/promises';
import { readResultsRecords } from '../results/report/load.ts';
import type { TestRecord } from '../results/json.ts';
import type { HistoryStore, RunSummary } from './store.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import { runIdsOfFile } from './record-run.ts';

export interface ResolvedRun {
  /** What to call it in output. */
  name: string;
  records: TestRecord[];
  /** The run's id when it came from the store (its values are there). */
  storedRunId?: string;
}

export class RunRefError extends DisaggBenchError {
  override name = 'RunRefError';
  /** `store`: the history store the run was looked for in, as its description names it. */
  constructor(message: string, store: string) {
    super(message, { place: store });
  }
}

/** The latest run of a results file (records without a run context: record-run.ts says which run). */
export function latestRunOf(records: TestRecord[]): TestRecord[] {
  const byRun = new Map<string, TestRecord[]>();
  const runIdOf = runIdsOfFile(records);
  for (const r of records) {
    const id = runIdOf(r);
    if (!byRun.has(id)) byRun.set(id, []);
    byRun.get(id)!.push(r);
  }
  const end = (rs: TestRecord[]) => rs.reduce((max, r) => Math.max(max, Date.parse(r.timing.end) || 0), 0);
  return [...byRun.values()].sort((a, b) => end(a) - end(b)).at(-1) ?? [];
}

const isPath = async (ref: string) => (await stat(ref).catch(() => undefined)) !== undefined;

export async function resolveRun(ref: string, store: () => Promise<HistoryStore>): Promise<ResolvedRun> {
  if (ref.endsWith('.json') || (await isPath(ref))) return { name: ref, records: latestRunOf(await readResultsRecords(ref)) };
  const s = await store();
  const runs = await s.runs();
  const pick = (run: RunSummary | undefined, why: string) => {
    if (!run) throw new RunRefError(`${why}; \`disagg-bench history runs\` lists the runs of ${s.description}`, s.description);
    return run;
  };
  let run: RunSummary;
  if (ref === 'latest') run = pick(runs.at(-1), `${s.description} holds no run`);
  else if (ref === 'previous') run = pick(runs.at(-2), `${s.description} holds fewer than two runs`);
  else run = pick(runs.find((r) => r.runId === ref) ?? runs.filter((r) => r.label === ref).at(-1), `no run with the id or label '${ref}'`);
  return { name: run.label ? `${run.label} (${run.runId})` : run.runId, records: await s.records([run.runId]), storedRunId: run.runId };
}
