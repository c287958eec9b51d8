// What makes two metric values "the same series" across runs: test id, GPU type, the config's
// identity (backend...) and the metric's labels (concurrency...), as upstream's match keys make
// two OpenSearch entries the same test case (open_search_db_utils.py _match: s_gpu_type,
// s_runtime, the server and client fields, l_concurrency...). Keys are sorted so the same
// identity always gives the same text.
import type { Metric } from '../metrics/metric.ts';

export interface CaseIdentity {
  testId: string;
  gpuType?: string;
  identity?: Record<string, string | number>;
  labels: Metric['labels'];
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);
const sortedJson = (object: Record<string, string | number> | undefined) => JSON.stringify(Object.fromEntries(Object.entries(object ?? {}).sort(byKey)));

export const labelsKey = (labels: Metric['labels']) => sortedJson(labels);

/** JSON.stringify([testId, gpuType, sorted identity, sorted labels]), built without re-sorting the identity each time. */
export function caseKey(c: CaseIdentity): string {
  return `${casePrefix(c.testId, c.gpuType, c.identity)}${labelsKey(c.labels)}]`;
}

/** `[testId,gpu,identity,` : the part of a case key that all metrics of one record share. */
export function casePrefix(testId: string, gpuType: string | undefined, identity: Record<string, string | number> | undefined): string {
  return `[${JSON.stringify(testId)},${JSON.stringify(gpuType ?? '')},${sortedJson(identity)},`;
}

/** The series a metric value belongs to: its case and the metric's name. */
export const seriesKey = (caseKeyText: string, metric: string) => `${caseKeyText}\u0000${metric}`;

/**
 * The series as a number, exact in JS and in a BIGINT: a 53-bit hash of its key (two 32-bit
 * multiplicative hashes, the second cut to 21 bits). The store groups by it; two series sharing an
 * id by chance would need some 10^7 series before it becomes likely at all.
 */
export function seriesId(caseKeyText: string, metric: string): number {
  const text = seriesKey(caseKeyText, metric);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 & 0x1fffff) + (h1 >>> 0);
}
