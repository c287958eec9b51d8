// The exact command lines the adapters build from a config, for every tool.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nixlbenchSpec } from '../../runners/nixl/tools/nixlbench.ts';
import { kvbenchSpec } from '../../runners/nixl/tools/kvbench.ts';
import { nixlEpPerfSpec } from '../../runners/nixl/tools/nixl-ep-perf.ts';
import { lmcacheSpec } from '../../runners/nixl/tools/lmcache.ts';
import { fillPlaceholders, TOOL_SPEC_FILE } from '../../runners/nixl/tool-spec.ts';
import { endedTask, torchEnvOf } from '../../runners/nixl/tool-task.ts';

const job = { logDir: '/logs/t1', configDir: '/cfg', ranks: 2, nodes: 2, tag: 'nixl_perf_t1' };

describe('tool command lines', () => {
  it("nixlbench: the EFA suite's run, etcd and group per job, sizes in bytes, booleans gflags-style", () => {
    const spec = nixlbenchSpec(
      {
        path: 'bin/nixlbench',
        start_order: [1, 0],
        options: { initiator_seg_type: 'VRAM', target_seg_type: 'VRAM', max_block_size: '64M', check_consistency: true, enable_pt: false },
        env: { FI_PROVIDER: 'efa', FI_HMEM_DISABLE_P2P: '0' },
      },
      job,
      'libfabric',
    );
    expect(spec.commands).toEqual([
      ['/cfg/bin/nixlbench', '--etcd_endpoints', '{etcd}', '--benchmark_group', 'disagg-nixl_perf_t1', '--backend', 'LIBFABRIC', '--initiator_seg_type=VRAM', '--target_seg_type=VRAM', '--max_block_size=67108864', '--check_consistency', '--enable_pt=false'],
    ].flatMap((c) => [c, c]));
    expect(spec.etcd).toEqual({ mode: 'private', dir: '/logs/t1/etcd', prefix: 'xferbench/disagg-nixl_perf_t1/' });
    expect(spec.ordering).toEqual({ kind: 'registration', sizeKey: 'xferbench/disagg-nixl_perf_t1//size', timeoutS: 120 });
    expect(spec.startOrder).toEqual([1, 0]);
    expect(spec.env).toEqual({ FI_PROVIDER: 'efa', FI_HMEM_DISABLE_P2P: '0' });
    const external = nixlbenchSpec({ etcd: 'http://etcd-service:2379', options: { benchmark_group: 'g', backend: 'UCX' } }, job, 'ucx');
    expect(external.etcd).toEqual({ mode: 'external', endpoints: 'http://etcd-service:2379', prefix: 'xferbench/g/' });
    expect(external.commands[0].slice(0, 7)).toEqual(['nixlbench', '--etcd_endpoints', '{etcd}', '--benchmark_group', 'g', '--backend', 'UCX']);
    expect(fillPlaceholders('{etcd}', { etcd: 'http://h:1', task: 0 })).toBe('http://h:1');
  });

  it("kvbench: the seed's `python tools/perf/cli.py sequential-ct-perftest metadata.yaml --verify-buffers --json-output-path`", () => {
    const spec = kvbenchSpec({ script: 'nixl/tools/perf/cli.py', command: 'sequential-ct-perftest', config_file: 'matrices/metadata.yaml', verify_buffers: true }, { ...job, ranks: 4 });
    expect(spec.commands[3]).toEqual(['python3', '/cfg/nixl/tools/perf/cli.py', 'sequential-ct-perftest', '/cfg/matrices/metadata.yaml', '--verify-buffers', '--json-output-path', '/logs/t1/kvbench.json']);
    expect(spec.torchEnv).toBe(true);
    expect(spec.env).toEqual({ NIXL_ETCD_ENDPOINTS: '{etcd}', NIXL_ETCD_NAMESPACE: '/nixl/disagg-nixl_perf_t1/' });
  });

  it('NIXL EP perf: one launcher per node; data plane with etcd, control plane on the TCP store', () => {
    const data = nixlEpPerfSpec({ dir: '/ws/nixl_ep_perf', plane: 'data', processes_per_node: 8, mode: 'e2e', tokens: 128, hidden: 7168, experts_per_rank: 36, topk: 8, nvlink_backend: 'none' }, job);
    expect(data.commands[0]).toEqual([
      'python3',
      '/ws/nixl_ep_perf/test_data_plane.py',
      '--num-processes=8',
      '--mode=e2e',
      '--tokens=128',
      '--hidden=7168',
      '--experts-per-rank=36',
      '--topk=8',
      '--nvlink-backend=none',
    ]);
    expect(data.etcd?.mode).toBe('private');
    const control = nixlEpPerfSpec({ dir: '/ws/nixl_ep_perf', plane: 'control', processes_per_node: 8, experts_per_rank: [8, 32] }, job);
    // the TCP store is asked for in the installed version's words, chosen from its --help at run time
    expect(control.commands[1]).toEqual(['python3', '/ws/nixl_ep_perf/test_control_plane.py', '--num-processes=8', '--experts-per-rank=8,32']);
    expect(control.probe?.help).toEqual(['python3', '/ws/nixl_ep_perf/test_control_plane.py', '--help']);
    expect(control.probe?.choices[0]).toMatchObject({ newerWords: [], olderWords: ['--use-tcp-store'] });
    expect(control.etcd).toBeUndefined();
    // WORLD_SIZE = nodes, RANK = node rank, MASTER_ADDR = the first node
    expect(torchEnvOf({ SLURM_STEP_NODELIST: 'gpu[07-08]', SLURM_JOB_ID: '42' }, 1, 2, 0)).toMatchObject({ RANK: '1', WORLD_SIZE: '2', MASTER_ADDR: 'gpu07' });
  });

  it("LMCache: the seed's sender and receiver, one GPU each, receiver first", () => {
    const spec = lmcacheSpec({ script: '/ws/LMCache/tests/disagg/test_nixl_pipe_v2.py', num_rounds: 5, num_objs: 500, simulate_work: true }, job);
    expect(spec.commands).toEqual([
      ['python3', '/ws/LMCache/tests/disagg/test_nixl_pipe_v2.py', '--role', 'sender', '--num-objs=500', '--num-rounds=5', '--simulate-work'],
      ['python3', '/ws/LMCache/tests/disagg/test_nixl_pipe_v2.py', '--role', 'receiver', '--num-objs=500', '--num-rounds=5', '--simulate-work'],
    ]);
    expect(spec.env).toEqual({ UCX_TLS: 'cuda_ipc,cuda_copy,tcp', CUDA_VISIBLE_DEVICES: '{task}' });
    expect(spec.startOrder).toEqual([1, 0]);
    expect(lmcacheSpec({ script: 'x.py', batch_size: 30, simulate_work: true, simulate_flag: 'simulate-workload' }, job).commands[0]).toEqual(['python3', 'x.py', '--role', 'sender', '--batch-size=30', '--simulate-workload']);
  });

  it('a task waiting for its turn sees an earlier task that ended in this run, not one of an earlier attempt', () => {
    const logDir = mkdtempSync(path.join(tmpdir(), 'nixl-ended-'));
    try {
      const spec = nixlbenchSpec({}, { ...job, logDir }, 'ucx');
      writeFileSync(path.join(logDir, TOOL_SPEC_FILE), JSON.stringify(spec));
      expect(endedTask(spec, [0])).toBeUndefined();
      // a status file older than the spec: an earlier attempt's, in the same folder
      writeFileSync(path.join(logDir, 'nixlbench-task0.status'), '0\n');
      utimesSync(path.join(logDir, 'nixlbench-task0.status'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      expect(endedTask(spec, [0])).toBeUndefined();
      writeFileSync(path.join(logDir, 'nixlbench-task0.status'), '1\n');
      expect(endedTask(spec, [1, 0])).toBe('task 0 ended (exit code 1)');
      expect(endedTask(spec, [1])).toBeUndefined();
    } finally {
      rmSync(logDir, { recursive: true, force: true });
    }
  });
});
