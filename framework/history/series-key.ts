// What makes two metric values "the same series" across runs: test id, GPU type, the config's
// identity (backend...) and the metric's labels (concurrency...), as upstream's match keys make
// two OpenSearch entries the same test case (open_search_db_utils.py _match: s_gpu_type,
// s_runtime, the server and client fields, l_concurrency...). Keys are sorted so the same
// identity always gives the same text.
import { createHash } from 'node:crypto';
import type { Metric } from '../metrics/metric.ts';

export interface CaseIdentity {
  testId: string;
  gpuType?: string;
  identity?: Record<string, string | number>;
  labels: Metric['labels'];
}

const sorted = (object: Record<string, string | number> | undefined) =>
  Object.fromEntries(Object.entries(object ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

export const labelsKey = (labels: Metric['labels']) => JSON.stringify(sorted(labels));

export function caseKey(c: CaseIdentity): string {
  return JSON.stringify([c.testId, c.gpuType ?? '', sorted(c.identity), sorted(c.labels)]);
}

/** The series a metric value belongs to: its case and the metric's name. */
export const seriesKey = (caseKeyText: string, metric: string) => `${caseKeyText}\u0000${metric}`;

/** The series as a number (the first 52 bits of SHA-1 of its key): exact in JS and in a BIGINT. */
export function seriesId(caseKeyText: string, metric: string): number {
  return Number.parseInt(createHash('sha1').update(seriesKey(caseKeyText, metric)).digest('hex').slice(0, 13), 16);
}
