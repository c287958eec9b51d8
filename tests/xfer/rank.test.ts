// Rank identity from each launcher's environment, and SLURM hostlists.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { RANK_VARIABLES } from '../../runners/common/rank-variables.ts';

describe('rankFromEnv', () => {
  it('reads srun: rank, world, local rank, node, first node of the step as store host', () => {
    const info = rankFromEnv({
      SLURM_PROCID: '5',
      SLURM_NTASKS: '8',
      SLURM_LOCALID: '1',
      SLURM_NODEID: '1',
      SLURM_TASKS_PER_NODE: '4(x2)',
      SLURMD_NODENAME: 'gpu02',
      SLURM_JOB_ID: '1234',
      SLURM_STEP_ID: '0',
      SLURM_STEP_NODELIST: 'gpu[01-02]',
      SLURM_JOB_NODELIST: 'gpu[01-04]',
      SLURM_LAUNCH_NODE_IPADDR: '10.0.0.1',
    });
    expect(info).toMatchObject({ rank: 5, worldSize: 8, localRank: 1, localWorldSize: 4, node: 'gpu02', launcher: 'slurm', job: 'slurm:1234.0' });
    // The first node by name, then the launch address for names that do not resolve.
    expect(info.storeHosts).toEqual(['gpu01', '10.0.0.1']);
    expect(info.storePorts).toHaveLength(8);
    // Every rank of the step derives the same ports; another step, others.
    expect(rankFromEnv({ SLURM_PROCID: '0', SLURM_NTASKS: '8', SLURM_JOB_ID: '1234', SLURM_STEP_ID: '0' }).storePorts).toEqual(info.storePorts);
    expect(rankFromEnv({ SLURM_PROCID: '0', SLURM_NTASKS: '8', SLURM_JOB_ID: '1234', SLURM_STEP_ID: '1' }).storePorts).not.toEqual(info.storePorts);
  });

  it('lets MASTER_ADDR/MASTER_PORT override SLURM, and XFER_NODE place a rank on a pretend node', () => {
    const info = rankFromEnv({ SLURM_PROCID: '0', SLURM_NTASKS: '2', SLURM_JOB_NODELIST: 'n1', MASTER_ADDR: 'head', MASTER_PORT: '29400', XFER_NODE: 'fake-b' });
    expect(info.storeHosts).toEqual(['head']);
    expect(info.storePorts).toEqual([29400]);
    expect(info.node).toBe('fake-b');
  });

  it('reads torchrun (and the local launcher) variables', () => {
    const info = rankFromEnv({ RANK: '3', WORLD_SIZE: '4', LOCAL_RANK: '1', LOCAL_WORLD_SIZE: '2', MASTER_ADDR: '10.1.1.1', MASTER_PORT: '29500' });
    expect(info).toMatchObject({ rank: 3, worldSize: 4, localRank: 1, localWorldSize: 2, launcher: 'torchrun', storeHosts: ['10.1.1.1'], storePorts: [29500] });
    expect(info.node).toBe(os.hostname());
  });

  it('reads mpirun (Open MPI) variables', () => {
    const info = rankFromEnv({ OMPI_COMM_WORLD_RANK: '2', OMPI_COMM_WORLD_SIZE: '4', OMPI_COMM_WORLD_LOCAL_RANK: '0', OMPI_COMM_WORLD_LOCAL_SIZE: '2' });
    expect(info).toMatchObject({ rank: 2, worldSize: 4, localRank: 0, localWorldSize: 2, launcher: 'openmpi' });
  });

  it('reads every launcher family of the table by its own variables, and the one XFER_RANK_VARIABLES names first', () => {
    for (const row of RANK_VARIABLES) {
      const env = { ...Object.fromEntries(row.job.filter((name) => !name.startsWith('MASTER_')).map((name, i) => [name, String(4000 + i)])), [row.rank]: '1', [row.size]: '3', ...(row.localRank ? { [row.localRank]: '1' } : {}) };
      const info = rankFromEnv({ ...env, XFER_RANK_VARIABLES: row.name });
      expect(info, row.name).toMatchObject({ rank: 1, worldSize: 3, localRank: row.localRank ? 1 : 0, launcher: row.name });
      // Every rank of the step agrees on the store's ports; a rank of another step derives others.
      expect(rankFromEnv({ ...env, [row.rank]: '0', XFER_RANK_VARIABLES: row.name }).storePorts, row.name).toEqual(info.storePorts);
      expect(rankFromEnv({ ...env, [row.job[0]]: '4999', XFER_RANK_VARIABLES: row.name }).storePorts, row.name).not.toEqual(info.storePorts);
    }
    // Named, a launcher's row wins over another's variables in the same environment (a torchrun child of an srun task).
    const both = { RANK: '0', WORLD_SIZE: '2', SLURM_PROCID: '3', SLURM_NTASKS: '4' };
    expect(rankFromEnv({ ...both, XFER_RANK_VARIABLES: 'slurm' })).toMatchObject({ rank: 3, worldSize: 4, launcher: 'slurm' });
    expect(rankFromEnv(both)).toMatchObject({ rank: 0, worldSize: 2, launcher: RANK_VARIABLES[0].name });
    expect(() => rankFromEnv({ XFER_RANK_VARIABLES: 'pbs' })).toThrow(/XFER_RANK_VARIABLES='pbs' names no launcher's variables; expected one of torchrun, slurm/);
    expect(() => rankFromEnv({ XFER_RANK_VARIABLES: 'gridengine', JOB_ID: '7' })).toThrow(/the gridengine launcher .* sets DISAGG_TASK_RANK and DISAGG_TASK_COUNT, and this process has DISAGG_TASK_RANK unset/);
  });

  it('is a world of one without a launcher', () => {
    expect(rankFromEnv({})).toMatchObject({ rank: 0, worldSize: 1, launcher: 'single' });
  });

  it('names the variable that is wrong', () => {
    expect(() => rankFromEnv({ RANK: 'x', WORLD_SIZE: '2' })).toThrow(/RANK='x' is not a non-negative integer/);
    expect(() => rankFromEnv({ RANK: '4', WORLD_SIZE: '4' })).toThrow(/rank 4 is outside a world of 4/);
    expect(() => rankFromEnv({ SLURM_PROCID: '0', SLURM_NTASKS: '1', SLURM_STEP_NODELIST: 'gpu[01-02' })).toThrow(/SLURM_STEP_NODELIST: host list "gpu\[01-02" has a "\[" without its "\]"/);
  });
});
