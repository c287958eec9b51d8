// The NIXL EP perf tests' output, line for line, so one parser reads both.
import type { MinAvgMax } from '../../../common/stats.ts';
import type { ControlOperation, EpMode } from './ep-options.ts';

const RULE = '='.repeat(70);
const THIN = '-'.repeat(70);

export interface DataPlaneBannerInfo {
  mode: EpMode;
  ranks: number;
  tokens: number;
  hidden: number;
  expertsPerRank: number;
  topk: number;
  backend: string;
  memory: string;
  warmup: number;
  iters: number;
  bytesPerRank: number;
  layout: string;
  /** How the bytes move (GPU-initiated kernels or the host-posted emulation). */
  initiatedBy: string;
  /** How iterations are timed. */
  timing: string;
}

export function dataPlaneBanner(b: DataPlaneBannerInfo): string {
  return [
    RULE,
    'NIXL EP Data Plane Performance Test',
    RULE,
    `Mode: ${b.mode}`,
    `Ranks: ${b.ranks}, Tokens: ${b.tokens}, Hidden: ${b.hidden}`,
    `Experts: ${b.expertsPerRank}/rank (${b.expertsPerRank * b.ranks} total), TopK: ${b.topk}`,
    `Backend: ${b.backend} (${b.memory} memory)`,
    `Initiated by: ${b.initiatedBy}`,
    `Timing: ${b.timing}`,
    `Warmup: ${b.warmup}, Measure: ${b.iters} iterations`,
    `Layout: ${b.layout}, bytes per rank per iteration: ${b.bytesPerRank}`,
    RULE,
  ].join('\n');
}

export function dataPlaneResult(mode: EpMode, passed: number, ranks: number, bandwidth: MinAvgMax, latencyUs: MinAvgMax): string {
  return [
    '',
    RULE,
    `Data Plane (${mode}): ${passed}/${ranks} ranks passed`,
    RULE,
    `Bandwidth (GB/s): avg=${bandwidth.avg.toFixed(2)}, min=${bandwidth.min.toFixed(2)}, max=${bandwidth.max.toFixed(2)}`,
    `Latency (μs):     avg=${latencyUs.avg.toFixed(1)}, min=${latencyUs.min.toFixed(1)}, max=${latencyUs.max.toFixed(1)}`,
  ].join('\n');
}

/**
 * Not in the test's output: the bytes each rank received from OTHER ranks per iteration and their
 * rate (bytes / mean time), avg/min/max across ranks. On GPU memory ('GPU': the bytes that cross
 * between GPUs, as DeepEP counts NVLink bytes); on host memory ('rank').
 */
export function crossGpuLines(bytes: MinAvgMax, rate: MinAvgMax, between: 'GPU' | 'rank' = 'GPU'): string {
  return [
    `Cross-${between} bytes per rank per iteration (received from other ${between}s): avg=${bytes.avg.toFixed(0)}, min=${bytes.min.toFixed(0)}, max=${bytes.max.toFixed(0)}`,
    `Cross-${between} rate (GB/s): avg=${rate.avg.toFixed(2)}, min=${rate.min.toFixed(2)}, max=${rate.max.toFixed(2)}`,
  ].join('\n');
}

/** GPU-initiated: one phase's kernel time split into moving the data and waiting for the peers' flags (us, across ranks). */
export function kernelProfileLine(phase: string, dataUs: MinAvgMax, waitUs: MinAvgMax): string {
  const f = (x: MinAvgMax) => `avg=${x.avg.toFixed(1)}, min=${x.min.toFixed(1)}, max=${x.max.toFixed(1)}`;
  return `Kernel ${phase} (μs per run): data ${f(dataUs)}; flag wait ${f(waitUs)}`;
}

export function controlPlaneTable(expertsPerRank: number, ranks: number, rows: { operation: ControlOperation; ms: MinAvgMax }[]): string {
  const line = (name: string, values: string[]) => name.padEnd(16) + values.map((v, i) => (i < values.length - 1 ? v.padEnd(13) : v)).join('');
  const total = rows.reduce((a, r) => a + r.ms.avg, 0);
  return [
    RULE,
    `Control Plane: ${expertsPerRank} experts/rank x ${ranks} ranks = ${expertsPerRank * ranks} total`,
    RULE,
    line('Operation', ['Avg (ms)', 'Min (ms)', 'Max (ms)']),
    THIN,
    ...rows.map((r) => line(r.operation, [r.ms.avg.toFixed(2), r.ms.min.toFixed(2), r.ms.max.toFixed(2)])),
    THIN,
    line('TOTAL', [total.toFixed(2)]),
    RULE,
  ].join('\n');
}

/** test_control_plane.py's log_single_op_results: `CONNECT: 245.67ms avg across 8 ranks (min=242.33, max=248.91) [8 experts/rank]`. */
export function singleOperationLine(operation: ControlOperation, acrossRanks: MinAvgMax, ranks: number, expertsPerRank: number): string {
  return `${operation.toUpperCase()}: ${acrossRanks.avg.toFixed(2)}ms avg across ${ranks} ranks (min=${acrossRanks.min.toFixed(2)}, max=${acrossRanks.max.toFixed(2)}) [${expertsPerRank} experts/rank]`;
}
