// For the run digest (results/digest/): each headline figure of this run's records as the run
// before it measured it, from the store: the latest valid value of the same series (test, GPU type,
// identity, labels, metric) in another run, whatever that run's kind.
import type { TestRecord } from '../results/json.ts';
import { previousKey, type PreviousValues } from '../results/digest/digest.ts';
import { caseKey } from './series-key.ts';
import type { HistoryStore } from './store.ts';

export async function previousValues(store: HistoryStore, records: TestRecord[], runId: string): Promise<PreviousValues> {
  const wanted = records.filter((r) => r.headline?.length);
  const out = new Map<string, { value: number; runId: string }>();
  if (wanted.length === 0) return out;
  const points = await store.points({ testIds: [...new Set(wanted.map((r) => r.testId))] });
  for (const record of wanted) {
    for (const ref of record.headline!) {
      const series = caseKey({ testId: record.testId, gpuType: record.gpuType, identity: record.run?.identity, labels: ref.labels });
      const before = points.filter((p) => p.caseKey === series && p.metric === ref.name && p.runId !== runId && p.valid).at(-1);
      if (before) out.set(previousKey(record.testId, ref.name, ref.labels), { value: before.value, runId: before.runId });
    }
  }
  return out;
}
