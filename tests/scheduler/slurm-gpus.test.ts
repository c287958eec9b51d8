// the GPU type of a run started where there is no GPU (a SLURM login node). Asked
// of SLURM through the scheduler layer (sinfo's gres of the partition's nodes): parsed from every
// gres form sinfo prints; against the shared local cluster (fake GPUs without a type: nothing to
// take); against a one-node cluster of this file's own whose fake GPUs have gres type h200, where
// `disagg-bench list` with GPU_TYPE unset runs the H200 configs and says where the type came from.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gresGpuItems, parsePartitionGpus, partitionGpus } from '../../framework/scheduler/slurm-gpus.ts';
import { detectGpuType } from '../../framework/select/gpu.ts';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { claimPorts } from '../fixtures/reliability/faults-cluster.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../..');
const noNvml = async (): Promise<string[]> => {
  throw new Error('NVML: libnvidia-ml.so.1 not found');
};

describe('sinfo gres', () => {
  it('every form of a gres cell: typed, untyped, socket bindings, other gres, (null)', () => {
    expect(gresGpuItems('gpu:h200:8(S:0-1)')).toEqual([{ type: 'h200', count: 8 }]);
    expect(gresGpuItems('gpu:nvidia_h100_80gb_hbm3:8(S:0,1),shard:8')).toEqual([{ type: 'nvidia_h100_80gb_hbm3', count: 8 }]);
    expect(gresGpuItems('gpu:4')).toEqual([{ count: 4 }]);
    expect(gresGpuItems('gpu:a100:4,gpu:h100:2')).toEqual([{ type: 'a100', count: 4 }, { type: 'h100', count: 2 }]);
    expect(gresGpuItems('gpu:gb200')).toEqual([{ type: 'gb200', count: 1 }]);
    expect(gresGpuItems('(null)')).toEqual([]);
    expect(gresGpuItems('mps:100')).toEqual([]);
  });

  it('the partition named, else the default one (sinfo marks it *); nodes listed once per partition', () => {
    const out = ['a1|gpu*|gpu:h200:8(S:0-1)', 'a2|gpu*|gpu:h200:8(S:0-1)', 'b1|cpu|(null)', 'a1|all|gpu:h200:8', 'b1|all|(null)', 'c1|mixed|gpu:4', 'c2|mixed|gpu:b200:4'].join('\n');
    expect(parsePartitionGpus(out)).toEqual({ partition: 'gpu', types: ['h200'], untypedNodes: [], nodes: 2 });
    expect(parsePartitionGpus(out, 'cpu')).toEqual({ partition: 'cpu', types: [], untypedNodes: [], nodes: 1 });
    expect(parsePartitionGpus(out, 'mixed')).toEqual({ partition: 'mixed', types: ['b200'], untypedNodes: ['c1'], nodes: 2 });
    expect(parsePartitionGpus(out, 'nope')).toBeUndefined();
  });

  it('with sinfo\'s CPU column: the smallest node\'s CPUs and GPUs, what a job\'s tasks per node must fit', () => {
    const out = ['a1|gpu*|gpu:h200:8(S:0-1)|64', 'a2|gpu*|gpu:h200:4|32', 'b1|cpu|(null)|4'].join('\n');
    expect(parsePartitionGpus(out)).toMatchObject({ partition: 'gpu', cpusPerNode: 32, gpusPerNode: 4 });
    expect(parsePartitionGpus(out, 'cpu')).toMatchObject({ partition: 'cpu', cpusPerNode: 4, gpusPerNode: 0 });
  });
});

describe('GPU detection order: GPU_TYPE, SLURM, NVML, none', () => {
  const slurm = (types: string[], untypedNodes: string[] = []) => async () => ({ partition: 'batch', types, untypedNodes });

  it('GPU_TYPE wins; a typed partition beats NVML; several types, untyped nodes or none fall through, saying why', async () => {
    const h100 = async () => ['NVIDIA H100 80GB HBM3'];
    expect(await detectGpuType({ GPU_TYPE: 'B200' }, h100, slurm(['h200']))).toMatchObject({ gpuType: 'B200', source: 'GPU_TYPE' });
    expect(await detectGpuType({}, h100, slurm(['nvidia_h200_141gb']))).toEqual({ gpuType: 'H200', source: 'slurm', detail: "SLURM partition batch: its nodes' gres type is nvidia_h200_141gb" });
    expect(await detectGpuType({}, h100, slurm(['a100', 'h100']))).toMatchObject({ gpuType: 'H100', source: 'nvml' });
    const none = await detectGpuType({}, noNvml, slurm([], ['n1', 'n2']));
    expect(none).toEqual({ gpuType: undefined, source: 'none', detail: 'SLURM partition batch: n1, n2 declare GPUs without a type (gres gpu:N); NVML: libnvidia-ml.so.1 not found' });
    const failing = async () => {
      throw new Error('sinfo --noheader failed: Unable to contact slurm controller');
    };
    expect((await detectGpuType({}, noNvml, failing)).detail).toMatch(/^SLURM: sinfo --noheader failed: Unable to contact slurm controller; NVML/);
  });
});

describeCluster('the shared local cluster', () => {
  it('its fake GPUs have no gres type: SLURM has nothing to say, and says so', async () => {
    const env = clusterEnv();
    const found = await partitionGpus(undefined, env);
    expect(found).toMatchObject({ partition: 'debug', types: [], untypedNodes: ['n1', 'n2', 'n3', 'n4'], cpusPerNode: 4, gpusPerNode: 4 });
    expect((await partitionGpus('small', env)).untypedNodes).toEqual(['n1', 'n2']);
    await expect(partitionGpus('nope', env)).rejects.toThrow('sinfo lists no partition nope');
    const detection = await detectGpuType({}, noNvml, () => partitionGpus(undefined, env));
    expect(detection.detail).toMatch(/^SLURM partition debug: n1, n2, n3, \.\.\. declare GPUs without a type/);
  });
});

/** A one-node cluster whose 4 fake GPUs are gres type h200 (scripts/slurm-local.sh DISAGG_SLURM_GPU_TYPE). */
async function typedCluster() {
  for (;;) {
    const slot = Math.floor(Math.random() * 200);
    const port = 16_000 + slot * 5;
    if (!(await claimPorts(port, 2))) continue;
    const dir = `/tmp/disagg-slurm-gpu-type-${slot}`;
    const scriptEnv = {
      DISAGG_SLURM_DIR: dir, DISAGG_SLURM_PORT: String(port), DISAGG_SLURMD_PORT: String(port + 1), DISAGG_SLURM_NODES: '1',
      DISAGG_SLURM_NODE_PREFIX: 'g', DISAGG_SLURM_FIRST_JOB_ID: String(3_000_000 + slot * 10_000), DISAGG_SLURM_GPU_TYPE: 'h200',
    };
    const script = (verb: string) => execa('bash', [path.join(root, 'scripts/slurm-local.sh'), verb], { env: scriptEnv, all: true, stdin: 'ignore', timeout: 240_000 });
    return { dir, conf: `${dir}/etc/slurm.conf`, up: () => script('up'), down: async () => { await script('down'); rmSync(dir, { recursive: true, force: true }); } };
  }
}

describeCluster('a cluster whose GPUs have a gres type (its own)', () => {
  let cluster: Awaited<ReturnType<typeof typedCluster>>;
  const scratch = mkdtempSync(path.join(tmpdir(), 'gpu-type-slurm-'));
  beforeAll(async () => {
    cluster = await typedCluster();
    await cluster.up();
  }, 300_000);
  afterAll(async () => {
    await cluster?.down();
    rmSync(scratch, { recursive: true, force: true });
  }, 300_000);

  it('sinfo says h200; `disagg-bench list` with GPU_TYPE unset runs the H200 configs and skips the GB200-only one, naming where the type came from', async () => {
    expect(await partitionGpus(undefined, { SLURM_CONF: cluster.conf })).toMatchObject({ partition: 'debug', types: ['h200'], untypedNodes: [], nodes: 1 });
    const dir = path.join(scratch, 'test_configs/disagg/perf');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'on_h200.yaml'), stringify(baseConfig({ metadata: { supported_gpus: ['H200', 'GB200'] } })));
    writeFileSync(path.join(dir, 'gb200_only.yaml'), stringify(baseConfig()));
    const env: Record<string, string | undefined> = { ...process.env, SLURM_CONF: cluster.conf, WORK_DIR: scratch, OUTPUT_PATH: path.join(scratch, 'out'), SCHEDULER: 'slurm', GPU_TYPE: undefined, SLURM_PARTITION: undefined };
    const r = await execa('node', [path.join(root, 'bin/disagg-bench.js'), 'list', '--type', 'disagg'], { env, extendEnv: false, reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toContain('disagg_perf_on_h200\tWAITING');
    expect(r.stdout).toContain('disagg_perf_gb200_only\tSKIPPED: GPU type H200 is not in supported_gpus [GB200]');
    expect(r.stderr).toContain("GPU type H200 from SLURM partition debug: its nodes' gres type is h200");
  }, 120_000);
});
