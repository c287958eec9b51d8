// The KV hand-over of a disaggregated serving run, per concurrency: how many bytes each request's
// KV cache was and how long its hand-over took, as the generation servers reported them to the
// client (kv_transfer with each answer's usage) and serve-bench saved them in
// concurrency_<c>/result.json (kv_handover: requests, and mean, median, p99, min, max of bytes,
// transfer_ms, the transfer engine's READ, and handover_ms, READ + checksum + loading the state).
import type { ExtractResult, Metric } from '../metric.ts';

const FIGURES = [
  { key: 'bytes', name: 'KV_HANDOVER_BYTES', unit: 'bytes' },
  { key: 'transfer_ms', name: 'KV_TRANSFER_TIME', unit: 'ms' },
  { key: 'handover_ms', name: 'KV_HANDOVER_TIME', unit: 'ms' },
] as const;
const STATS = ['mean', 'median', 'p99', 'min', 'max'] as const;

/** Every KV hand-over metric name this extractor yields: SERVER_MEDIAN_KV_HANDOVER_BYTES... */
export const KV_HANDOVER_METRICS = FIGURES.flatMap((f) => STATS.map((s) => `SERVER_${s.toUpperCase()}_${f.name}`));

export function extractKvHandoverMetrics(text: string, _spec: unknown, file?: string): ExtractResult {
  const concurrency = Number(/concurrency_(\d+)/.exec(file ?? '')?.[1]);
  if (!Number.isInteger(concurrency)) return { metrics: [], problems: [`${file}: not under a concurrency_<c>/ folder`] };
  let json: { kv_handover?: Record<string, unknown> };
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { metrics: [], problems: [`not JSON: ${(err as Error).message}`] };
  }
  const kv = json.kv_handover;
  if (!kv) return { metrics: [], problems: ['no kv_handover: the server reported no hand-over with its answers'] };
  const metrics: Metric[] = [];
  for (const f of FIGURES) {
    const stats = kv[f.key] as Record<string, unknown> | undefined;
    for (const s of STATS) {
      const value = stats?.[s];
      if (typeof value === 'number') {
        metrics.push({ name: `SERVER_${s.toUpperCase()}_${f.name}`, value, unit: f.unit, higherIsBetter: false, labels: { concurrency }, source: `${file} kv_handover.${f.key}.${s}` });
      }
    }
  }
  return { metrics, problems: [] };
}
