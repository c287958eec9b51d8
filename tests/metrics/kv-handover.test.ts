// The KV hand-over figures of a llamacpp run, read from serve-bench's result.json per concurrency:
// the distribution of bytes and times per request under the concurrency of the folder; a file
// without them (a server that reported no hand-over) is a problem, never a zero.
import { expect, it } from 'vitest';
import { extractKvHandoverMetrics, KV_HANDOVER_METRICS } from '../../framework/metrics/extractors/kv-handover.ts';

const stats = (base: number) => ({ mean: base, median: base + 1, p99: base + 2, min: base - 1, max: base + 3 });

it('reads bytes, transfer and hand-over times per request, labelled with the folder\'s concurrency', () => {
  const text = JSON.stringify({ completed: 8, kv_handover: { requests: 8, bytes: stats(1000), transfer_ms: stats(10), handover_ms: stats(20) } });
  const { metrics, problems } = extractKvHandoverMetrics(text, {}, 'concurrency_8/result.json');
  expect(problems).toEqual([]);
  expect(metrics.map((m) => m.name).sort()).toEqual([...KV_HANDOVER_METRICS].sort());
  expect(metrics.find((m) => m.name === 'SERVER_P99_KV_HANDOVER_BYTES')).toMatchObject({ value: 1002, unit: 'bytes', labels: { concurrency: 8 }, source: 'concurrency_8/result.json kv_handover.bytes.p99' });
  expect(metrics.find((m) => m.name === 'SERVER_MEDIAN_KV_HANDOVER_TIME')).toMatchObject({ value: 21, unit: 'ms', higherIsBetter: false });
});

it('says so when the result holds no hand-over, or is no JSON', () => {
  expect(extractKvHandoverMetrics('{"completed": 4}', {}, 'concurrency_4/result.json')).toEqual({ metrics: [], problems: ['no kv_handover: the server reported no hand-over with its answers'] });
  expect(extractKvHandoverMetrics('{', {}, 'concurrency_4/result.json').problems[0]).toMatch(/^not JSON/);
});
