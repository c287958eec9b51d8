// nixlbench's current output format, so one parser reads the real tool and this sweep: a banner
// (160 '*', `<description padded to 60>: <value>` lines) and a table separated by 160 '-', columns
// left-aligned in nixlbench's widths, bandwidth with 6 decimals and times with 1.
import type { SweepOptions } from './sweep-options.ts';

export const SEPARATOR_WIDTH = 160;

export interface SweepRow {
  blockSize: number;
  batchSize: number;
  /** GB/s (1e9 bytes/s) of rank 0's transfers. */
  bwGbps: number;
  /** Sum over initiators, and its share of pairs x link bandwidth: pairwise runs with more than 2 ranks only. */
  aggregateGbps?: number;
  networkUtilPct?: number;
  avgLatUs: number;
  avgPrepUs: number;
  p99PrepUs: number;
  avgPostUs: number;
  p99PostUs: number;
  avgTxUs: number;
  p99TxUs: number;
}

const option = (description: string, value: string | number) => `${description.padEnd(60)}: ${value}`;

export function sweepBanner(o: SweepOptions, op: string, worldSize: number, initiators: number, targets: number): string {
  const lines = [
    '*'.repeat(SEPARATOR_WIDTH),
    'NIXLBench Configuration',
    '*'.repeat(SEPARATOR_WIDTH),
    option('Runtime (--runtime_type=[ETCD,ASIO])', runtimeLine(o)),
    option('Worker type (--worker_type=[nixl,nvshmem])', 'disagg-bench transfer engine'),
    option('Backend (--backend=[shm,ucx,cuda,nccl])', o.backend),
    option('Enable pt (--enable_pt=[0,1])', o.nixlbench.progressThread ? 1 : 0),
    option('Device list (--device_list=dev1,dev2,...)', o.nixlbench.deviceList?.join(',') ?? 'all'),
    option('Enable VMM (--enable_vmm=[0,1])', o.nixlbench.vmm ? 1 : 0),
    option('Recreate xfer each iteration (--recreate_xfer=[0,1])', o.nixlbench.recreateXfer ? 1 : 0),
    option('Re-register memory each iteration (--reregister_mem=[0,1])', o.nixlbench.reregisterMem ? 1 : 0),
    option('Pipeline depth (--pipeline_depth=N)', o.pipelineDepth),
    option('Use hugepages (--use_hugepages=[0,1])', o.nixlbench.hugepages ? 1 : 0),
    option('Initiator seg type (--initiator_seg_type=[DRAM,VRAM])', o.initiatorSegType),
    option('Target seg type (--target_seg_type=[DRAM,VRAM])', o.targetSegType),
    option('Scheme (--scheme=[pairwise,manytoone,onetomany,tp])', o.scheme),
    option('Mode (--mode=[SG,MG])', o.nixlbench.mode),
    option('Op type (--op_type=[READ,WRITE])', op),
    option('Check consistency (--check_consistency=[0,1])', o.checkConsistency ? 1 : 0),
    option('Total buffer size (--total_buffer_size=N)', o.totalBufferSize),
    option('Num initiator dev (--num_initiator_dev=N)', initiators),
    option('Num target dev (--num_target_dev=N)', targets),
    option('Start block size (--start_block_size=N)', o.startBlockSize),
    option('Max block size (--max_block_size=N)', o.maxBlockSize),
    option('Start batch size (--start_batch_size=N)', o.startBatchSize),
    option('Max batch size (--max_batch_size=N)', o.maxBatchSize),
    option('Num iter (--num_iter=N)', o.numIter),
    option('Warmup iter (--warmup_iter=N)', o.warmupIter),
    option('Large block iter factor (--large_blk_iter_ftr=N)', o.largeBlkIterFtr),
    option('Num threads (--num_threads=N)', o.numThreads),
    option('Ranks', worldSize),
    '-'.repeat(SEPARATOR_WIDTH),
    '',
  ];
  return lines.join('\n');
}

/** How the ranks met: nixlbench's runtimes where one was used, else the launcher and the engine's store. */
function runtimeLine(o: SweepOptions): string {
  const r = o.nixlbench.runtime;
  if (r.etcdEndpoints) return `ETCD ${r.etcdEndpoints} (group ${r.benchmarkGroup}), then the disagg-bench store`;
  if (r.type === 'ASIO') return `ASIO ${r.asioAddress}:${r.asioPort} (the disagg-bench store)`;
  return 'disagg-bench store (rank 0, TCP)';
}

/** Pairwise with more than 2 ranks: nixlbench adds the aggregate and network-utilisation columns. */
export function hasAggregateColumns(o: Pick<SweepOptions, 'scheme'>, worldSize: number): boolean {
  return o.scheme === 'pairwise' && worldSize > 2;
}

const HEADER: [string, number][] = [
  ['Block Size (B)', 20],
  ['Batch Size', 15],
  ['B/W (GB/Sec)', 15],
];
const AGGREGATE: [string, number][] = [
  ['Aggregate B/W (GB/Sec)', 25],
  ['Network Util (%)', 20],
];
const TIMES: [string, number][] = [
  ['Avg Lat. (us)', 15],
  ['Avg Prep (us)', 15],
  ['P99 Prep (us)', 15],
  ['Avg Post (us)', 15],
  ['P99 Post (us)', 15],
  ['Avg Tx (us)', 15],
  ['P99 Tx (us)', 15],
];

export function sweepTableHeader(aggregate: boolean): string {
  const columns = [...HEADER, ...(aggregate ? AGGREGATE : []), ...TIMES];
  return `${columns.map(([name, width]) => name.padEnd(width)).join('')}\n${'-'.repeat(SEPARATOR_WIDTH)}`;
}

export function sweepTableRow(row: SweepRow, aggregate: boolean): string {
  const cells: [string, number][] = [
    [String(row.blockSize), 20],
    [String(row.batchSize), 15],
    [row.bwGbps.toFixed(6), 15],
  ];
  // nixlbench keeps 6 decimals for the two aggregate columns (its setprecision(1) comes after them)
  if (aggregate) cells.push([(row.aggregateGbps ?? 0).toFixed(6), 25], [(row.networkUtilPct ?? 0).toFixed(6), 20]);
  for (const value of [row.avgLatUs, row.avgPrepUs, row.p99PrepUs, row.avgPostUs, row.p99PostUs, row.avgTxUs, row.p99TxUs]) {
    cells.push([value.toFixed(1), 15]);
  }
  return cells.map(([text, width]) => text.padEnd(width)).join('');
}
