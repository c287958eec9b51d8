// The NIXL EP tests' multi-node form: WORLD_SIZE = nodes, RANK = node rank,
// --num-processes per node, MASTER_ADDR (or --world-size / --rank / --master-addr / --master-port);
// srun with one task per node; tasks that are ranks themselves must agree with --num-processes.
import { describe, expect, it } from 'vitest';
import { epNodeWorld } from '../../../runners/xfer/benches/ep/ep-nodes.ts';
import { parseEpArgs } from '../../../runners/xfer/benches/ep/ep-options.ts';

describe('ep: nodes x --num-processes', () => {
  it('reads WORLD_SIZE/RANK/MASTER_ADDR at node level when --num-processes is given; the flags win', () => {
    const env = { WORLD_SIZE: '2', RANK: '1', MASTER_ADDR: 'node0', MASTER_PORT: '29999' };
    expect(epNodeWorld(['--num-processes=8', '--mode', 'e2e'], env)).toEqual({
      node: { nodes: 2, nodeRank: 1, ranksPerNode: 8, masterAddr: 'node0', masterPort: 29999, source: 'WORLD_SIZE/RANK' },
      rest: ['--mode', 'e2e'],
    });
    expect(epNodeWorld(['--num-processes', '4', '--world-size', '3', '--rank', '2', '--master-addr', 'n0', '--master-port=1234'], env).node).toEqual({
      nodes: 3,
      nodeRank: 2,
      ranksPerNode: 4,
      masterAddr: 'n0',
      masterPort: 1234,
      source: 'flags',
    });
    // the EP tests' single-node form with WORLD_SIZE=1: 8 ranks, not 1
    expect(epNodeWorld(['--num-processes=8'], { WORLD_SIZE: '1', RANK: '0' }).node).toMatchObject({ nodes: 1, nodeRank: 0, ranksPerNode: 8 });
    // without --num-processes nothing changes: ranks come from --ranks or the launcher
    expect(epNodeWorld(['--ranks', '4'], env)).toEqual({ rest: ['--ranks', '4'] });
  });

  it("applies the tests' own checks", () => {
    expect(() => epNodeWorld(['--num-processes', '2'], { WORLD_SIZE: '2', RANK: '2' })).toThrow('RANK must be in [0, 1], got 2');
    expect(() => epNodeWorld(['--num-processes', '2', '--world-size', '2', '--rank', '1'], {})).toThrow(/MASTER_ADDR must be set \(not 127\.0\.0\.1\) for worker nodes/);
    expect(() => epNodeWorld(['--world-size', '2'], {})).toThrow(/--world-size places a node of --num-processes ranks .* give --num-processes too/);
  });

  it('srun: one task per node is a node; tasks that are ranks must match --num-processes x nodes', () => {
    const oneTaskPerNode = { SLURM_NTASKS: '2', SLURM_PROCID: '1', SLURM_NNODES: '2', SLURM_STEP_NODELIST: 'n[1-2]' };
    expect(epNodeWorld(['--num-processes', '4'], oneTaskPerNode).node).toMatchObject({ nodes: 2, nodeRank: 1, ranksPerNode: 4, masterAddr: 'n1', source: 'srun (one task per node)' });
    const ranks = { SLURM_NTASKS: '8', SLURM_PROCID: '3', SLURM_NNODES: '2' };
    expect(epNodeWorld(['--num-processes', '4'], ranks)).toEqual({ rest: [], ranksAreTasks: true });
    expect(() => epNodeWorld(['--num-processes', '8'], ranks)).toThrow(
      /--num-processes 8 asks for 8 ranks per node x 2 node\(s\) = 16, but the launcher started 8 task\(s\) that are ranks themselves/,
    );
  });
});

describe('ep: the tests\' other flags', () => {
  it('control plane: --warmup 0 and --rounds 1 by default; --iters is the rounds of a control-plane-only run', () => {
    expect(parseEpArgs(['--control-plane'])).toMatchObject({ cpWarmup: 0, rounds: 1, warmup: 10, iters: 100 });
    expect(parseEpArgs(['--control-plane', '--warmup', '2', '--rounds', '5'])).toMatchObject({ cpWarmup: 2, rounds: 5 });
    expect(parseEpArgs(['--control-plane', '--iters', '4'])).toMatchObject({ rounds: 4 });
    expect(parseEpArgs(['--test', 'cycle']).test).toBeUndefined();
    expect(parseEpArgs(['--control-plane', '--num-tokens', '128']).tokens).toBe(128);
    expect(parseEpArgs(['--timeout', '30']).timeoutS).toBe(30);
  });

  it('takes the metadata/NIC flags of both test versions: honest notes or one-sentence refusals', () => {
    expect(parseEpArgs(['--use-tcp-store', '--skip-nic-discovery']).notes).toEqual([
      "--use-tcp-store: the engine's store is a TCP store already (nothing to switch)",
      '--skip-nic-discovery: the engine does no NIC discovery (UCX picks, as with this flag)',
    ]);
    expect(() => parseEpArgs(['--use-etcd'])).toThrow(/--use-etcd: the engine's ranks exchange their metadata through its own TCP store/);
    expect(() => parseEpArgs(['--discover-nics'])).toThrow(/--discover-nics: GPU-NIC topology discovery .* is not done here/);
  });
});
