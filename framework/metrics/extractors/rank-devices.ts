// Which GPU each rank of a transfer benchmark used, from the line every GPU rank prints
// (runners/xfer/gpu-placement.ts):
//   GPU of rank 1: device 0, NVIDIA H100 80GB HBM3, bus 00000000:1B:00.0, node gpu01, shared by 2 ranks
// One RANK_GPU metric per (rank, device): the value is the device index, the labels say which
// device it is (name, PCI bus id, node) and how many ranks of the node share it. A log without
// such lines (host-memory runs) yields nothing and no problem.
import type { ExtractResult, Metric } from '../metric.ts';
import { RANK_DEVICE_LINE } from '../../../runners/common/rank-device-line.ts';
import { logLines } from './launch-prefix.ts';

export function extractRankDevices(text: string): ExtractResult {
  const metrics: Metric[] = [];
  const seen = new Set<string>();
  for (const line of logLines(text)) {
    const m = RANK_DEVICE_LINE.exec(line);
    if (!m) continue;
    const key = `${m[1]}/${m[2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    metrics.push({
      name: 'RANK_GPU',
      value: Number(m[2]),
      unit: 'index',
      labels: { rank: Number(m[1]), gpu: m[3], bus_id: m[4], node: m[5], shared_by: m[7] ? Number(m[7]) : 1 },
    });
  }
  return { metrics: metrics.sort((a, b) => Number(a.labels.rank) - Number(b.labels.rank)), problems: [] };
}
