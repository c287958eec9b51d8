// GPUs per node: a config whose ranks would share GPUs is refused (at
// validation, by the job's check on its node before any rank starts, and by each rank) unless it
// says benchmark.ranks_may_share_gpu; each GPU rank's device (index, name, bus id, node) goes into
// the results as RANK_GPU and into the report. All of it decided here without a GPU; the GPU
// script (bench/gpu/run.sh nixl-tools) runs the same configs on a 1-GPU machine.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { renderNixlJobScript } from '../../framework/types/nixl/job/job-script.ts';
import { sweepKind } from '../../framework/types/nixl/kinds/sweep.ts';
import { extractRankDevices } from '../../framework/metrics/extractors/rank-devices.ts';
import { testsTable } from '../../framework/results/report/tests-table.ts';
import { nodeGpuProblem } from '../../runners/xfer/gpu-check.ts';
import { placeRank } from '../../runners/xfer/gpu-placement.ts';
import { rankDeviceLine } from '../../runners/common/rank-device-line.ts';

type Json = Record<string, unknown>;
const root = path.resolve(import.meta.dirname, '../..');
const cudaSweep = parse(readFileSync(path.join(root, 'test_configs/nixl/perf/sweep_cuda_vram.yaml'), 'utf8')) as Json;
const withBenchmark = (values: Json) => ({ ...cudaSweep, benchmark: { ...(cudaSweep.benchmark as Json), ...values } });
const issues = (config: Json) => validateConfig(nixlType, parseYaml(stringify(config), 'test_configs/nixl/perf/t.yaml'), 'test_configs/nixl/perf/t.yaml', path.join(root, 'test_configs/nixl/perf/t.yaml')).map(formatIssue);

describe('ranks and GPUs per node', () => {
  it('validation refuses more ranks per node than GPUs per node, unless ranks_may_share_gpu', () => {
    expect(issues(withBenchmark({ gpus_per_node: 1 }))).toEqual([
      expect.stringMatching(/benchmark\.gpus_per_node: 2 ranks per node on 1 GPU\(s\) per node would share GPUs .*set benchmark\.ranks_may_share_gpu: true/),
    ]);
    expect(issues(withBenchmark({ gpus_per_node: 1, ranks_may_share_gpu: true }))).toEqual([]);
    expect(issues(cudaSweep)).toEqual([]);
  });

  it("the job checks its node before any rank starts, and carries the config's permission to the ranks", () => {
    const render = (config: Json) =>
      renderNixlJobScript({
        testId: 't',
        config: config as never,
        logDir: '/logs/t',
        packageRoot: root,
        rank: sweepKind.rankCommand({ config, configDir: '/cfg', logDir: '/logs/t', packageRoot: root }),
      });
    const script = render(cudaSweep);
    const check = script.indexOf('gpu-check --gpus-per-node 2 --ranks-per-node 2');
    expect(check).toBeGreaterThan(0);
    expect(check).toBeLessThan(script.indexOf('srun'));
    expect(script).not.toContain('XFER_RANKS_MAY_SHARE_GPU');
    const shared = render(withBenchmark({ gpus_per_node: 1, ranks_may_share_gpu: true }));
    expect(shared).toContain('export XFER_RANKS_MAY_SHARE_GPU=1');
    expect(shared).toContain('gpu-check --gpus-per-node 1 --ranks-per-node 2 --ranks-may-share-gpu');
  });

  it('the node check: 2 GPUs asked on a 1-GPU node refused with the reason; sharing only where allowed', () => {
    const env = { CUDA_VISIBLE_DEVICES: '0' };
    expect(nodeGpuProblem({ gpusPerNode: 2, ranksPerNode: 2, mayShare: false }, 1, 'gpu01', env)).toBe(
      'the config asks for 2 GPU(s) per node (benchmark.gpus_per_node) but node gpu01 has 1 GPU(s) visible (CUDA_VISIBLE_DEVICES=0): refused before any rank starts',
    );
    expect(nodeGpuProblem({ gpusPerNode: 2, ranksPerNode: 2, mayShare: true }, 1, 'gpu01', env)).toMatch(/asks for 2 GPU\(s\) per node/);
    expect(nodeGpuProblem({ gpusPerNode: 0, ranksPerNode: 2, mayShare: false }, 1, 'gpu01', {})).toBe(
      '2 ranks per node would share 1 GPU(s) (node gpu01 has 1 GPU(s)); set benchmark.ranks_may_share_gpu: true to allow it',
    );
    expect(nodeGpuProblem({ gpusPerNode: 1, ranksPerNode: 2, mayShare: true }, 1, 'gpu01', {})).toBeUndefined();
    expect(nodeGpuProblem({ gpusPerNode: 2, ranksPerNode: 2, mayShare: false }, 4, 'gpu01', {})).toBeUndefined();
  });

  it('each rank: its own GPU, or a refusal naming why, unless sharing is allowed', () => {
    const rank = (r: number) => ({ rank: r, localRank: r, localWorldSize: 2, node: 'gpu01' });
    expect([placeRank(rank(0), 2, false), placeRank(rank(1), 2, false)]).toEqual([0, 1]);
    expect(() => placeRank(rank(1), 1, false, { CUDA_VISIBLE_DEVICES: '3' })).toThrow(
      /2 ranks on node gpu01 but 1 GPU\(s\) visible \(CUDA_VISIBLE_DEVICES=3\): ranks would share a GPU, .*XFER_RANKS_MAY_SHARE_GPU=1/,
    );
    expect(placeRank(rank(1), 1, true)).toBe(0);
  });
});

describe("each rank's device in the results and the report", () => {
  const log = [
    rankDeviceLine({ rank: 0, node: 'gpu01', device: 0, name: 'NVIDIA H100 80GB HBM3', busId: '00000000:1B:00.0', sharedBy: 2 }),
    `[rank 1] ${rankDeviceLine({ rank: 1, node: 'gpu01', device: 0, name: 'NVIDIA H100 80GB HBM3', busId: '00000000:1B:00.0', sharedBy: 2 })}`,
    'Block Size (B)      Batch Size ...',
  ].join('\n');

  it('RANK_GPU per rank: device index, name, bus id, node, how many ranks share it', () => {
    const { metrics, problems } = extractRankDevices(log);
    expect(problems).toEqual([]);
    expect(metrics.map((m) => [m.value, m.labels])).toEqual([
      [0, { rank: 0, gpu: 'NVIDIA H100 80GB HBM3', bus_id: '00000000:1B:00.0', node: 'gpu01', shared_by: 2 }],
      [0, { rank: 1, gpu: 'NVIDIA H100 80GB HBM3', bus_id: '00000000:1B:00.0', node: 'gpu01', shared_by: 2 }],
    ]);
    // GPU configs read the device lines from the ranks' log, host-only ones do not
    expect(nixlType.metrics(cudaSweep, 'perf')).toContainEqual({ logFile: 'sweep.log', extractor: 'rank-devices', optional: true });
    const hostSweep = parse(readFileSync(path.join(root, 'test_configs/nixl/perf/sweep_shm_read_write.yaml'), 'utf8')) as Json;
    expect(nixlType.metrics(hostSweep, 'perf').some((s) => s.extractor === 'rank-devices')).toBe(false);
  });

  it('the report shows them with the test', () => {
    const metrics = extractRankDevices(log).metrics;
    const html = testsTable(
      [{ testId: 't', type: 'nixl', category: 'perf', configPath: 'c', jobId: '1', verdict: 'passed', failures: [], metrics, timing: { start: '', end: '', durationSec: 1 }, host: 'h' }],
      new Map(),
    );
    expect(html).toContain('RANK_GPU');
    expect(html).toContain('00000000:1B:00.0');
    expect(html).toContain('shared_by');
  });
});
