// buffer verification never runs inside a timed region. Every benchmark that
// verifies (CT perftest, sequential CT, sweep, EP, KV pipe, cache-engine) runs with
// XFER_TRACE_REGIONS, which makes each rank record where its timed regions begin and end and where
// it fills, poisons and checks buffers; the test reads that record and requires timed regions and
// verifications on every rank, and no verification of any rank overlapping any rank's timed region.
// Decided from the order of events the run recorded, never from how long anything took.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REGION_TRACE_ENV } from '../../../runners/xfer/benches/common/timed-regions.ts';
import { readRegionTrace, verificationInsideTimed, type RegionTrace } from '../../fixtures/xfer/region-trace.ts';
import { runBench } from './bench-cli.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'verify-timing-'));
const file = (name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};
file('m.txt', '0 256K 256K 64K\n256K 0 64K 256K\n128K 64K 0 256K\n64K 128K 256K 0\n');
const ct = file('ct.yaml', 'iters: 6\nwarmup_iters: 2\ntraffic_pattern: { matrix_file: m.txt, mem_type: cpu, xfer_op: WRITE }\n');
file('r.txt', '0 0 128K 128K\n0 0 128K 0\n0 0 0 0\n0 0 0 0\n');
const seq = file('seq.yaml', 'traffic_patterns:\n  - { matrix_file: m.txt, mem_type: cpu }\n  - { matrix_file: r.txt, mem_type: cpu, xfer_op: READ, sleep_before_launch_sec: 1 }\n');

async function traced(name: string, args: string[]): Promise<RegionTrace> {
  const trace = path.join(dir, `${name}.trace`);
  const r = await runBench(args, { [REGION_TRACE_ENV]: trace });
  expect(r.exitCode, r.out).toBe(0);
  return readRegionTrace(trace);
}

function expectVerifiedOutsideTiming(trace: RegionTrace, ranks: number[], verifyingRanks = ranks): void {
  expect(trace.unmatched).toEqual([]);
  expect([...new Set(trace.timed.map((t) => t.rank))].sort()).toEqual(ranks);
  expect([...new Set(trace.verified.map((v) => v.rank))].sort()).toEqual(verifyingRanks);
  expect(verificationInsideTimed(trace)).toEqual([]);
}

describe('verification is outside every timed region (XFER_TRACE_REGIONS)', { concurrent: true }, () => {
  it('ct-perftest --verify-buffers: checked after the warm-up iterations and after the timed loop, never in it', async () => {
    const trace = await traced('ct', ['ct-perftest', ct, '--ranks', '4', '--backend', 'shm', '--verify-buffers']);
    expectVerifiedOutsideTiming(trace, [0, 1, 2, 3]);
    // 2 checked warm-up iterations + 1 check of the timed loop, per rank
    expect(trace.verified.filter((v) => v.rank === 0 && v.name === 'ct-perftest check')).toHaveLength(3);
    expect(trace.timed.filter((t) => t.rank === 0)).toHaveLength(1);
  });

  it('sequential-ct-perftest --verify-buffers: isolated and workload phases', async () => {
    const trace = await traced('seq', ['sequential-ct-perftest', seq, '--ranks', '4', '--backend', 'shm', '--verify-buffers', '--warmup-iters', '1', '--isolation-iters', '3', '--workload-iters', '2', '--sleep-scale', '0.01']);
    expectVerifiedOutsideTiming(trace, [0, 1, 2, 3]);
    expect(new Set(trace.timed.map((t) => t.name))).toEqual(new Set(['sequential isolated pattern 0', 'sequential isolated pattern 1', 'sequential workload iteration 1', 'sequential workload iteration 2']));
  });

  it('sweep --check_consistency', async () => {
    const trace = await traced('sweep', ['sweep', '--ranks', '2', '--backend', 'shm', '--check_consistency', '--num_iter', '16', '--warmup_iter', '16', '--start_block_size', '4K', '--max_block_size', '64K']);
    // only the initiator times a loop; both ranks fill/poison and check
    expectVerifiedOutsideTiming(trace, [0], [0, 1]);
  });

  it('ep data plane', async () => {
    const trace = await traced('ep', ['ep', '--ranks', '2', '--backend', 'shm', '--mode', 'dispatch,combine,e2e', '--tokens', '16', '--hidden', '256', '--warmup', '1', '--iters', '4']);
    expectVerifiedOutsideTiming(trace, [0, 1]);
  });

  it('kvpipe: the receiver checks after the sender has timed its round', async () => {
    const trace = await traced('kvpipe', ['kvpipe', '--ranks', '2', '--buffer-size', '4M', '--num-objs', '6', '--obj-size', '1M', '--num-rounds', '2']);
    expectVerifiedOutsideTiming(trace, [0], [0, 1]);
  });

  it('cache-engine: the receiver checks after the sender timed store() and after its own retrieval', async () => {
    const trace = await traced('ce', ['cache-engine', '--ranks', '2', '--num-layers', '2', '--num-heads', '1', '--head-size', '64', '--num-blocks', '128', '--num-chunks', '6', '--buffer-size', '256K', '--num-rounds', '2']);
    expectVerifiedOutsideTiming(trace, [0, 1]);
  });
});
