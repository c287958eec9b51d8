import { describe, expect, it } from 'vitest';
import { expandHostlist, slurmStepNodes } from '../../runners/common/hostlist.ts';

describe('expandHostlist', () => {
  it('expands ranges, lists, zero padding, suffixes and plain names as scontrol show hostnames does', () => {
    expect(expandHostlist('n1')).toEqual(['n1']);
    expect(expandHostlist('n[1-3]')).toEqual(['n1', 'n2', 'n3']);
    expect(expandHostlist('n[1-2,4],login1')).toEqual(['n1', 'n2', 'n4', 'login1']);
    expect(expandHostlist('gpu[01-03,07],login1')).toEqual(['gpu01', 'gpu02', 'gpu03', 'gpu07', 'login1']);
    expect(expandHostlist('gpu[08-11]')).toEqual(['gpu08', 'gpu09', 'gpu10', 'gpu11']);
    expect(expandHostlist('n[8-10]')).toEqual(['n8', 'n9', 'n10']);
    expect(expandHostlist('r[1-2]-n[1-2]')).toEqual(['r1-n1', 'r1-n2', 'r2-n1', 'r2-n2']);
    expect(expandHostlist('a[1-2]-ib,b3')).toEqual(['a1-ib', 'a2-ib', 'b3']);
    expect(expandHostlist(' n[1-2], m1 \n')).toEqual(['n1', 'n2', 'm1']);
  });

  it('gives no nodes for the empty markers SLURM prints', () => {
    for (const empty of ['', 'None assigned', '(null)', 'None', 'N/A', undefined]) expect(expandHostlist(empty)).toEqual([]);
  });

  it('expands a very long range without running out of stack', () => {
    const hosts = expandHostlist('n[1-200000]');
    expect(hosts).toHaveLength(200_000);
    expect(hosts.at(-1)).toBe('n200000');
  });

  it('refuses what it cannot read, in one sentence naming the list', () => {
    expect(() => expandHostlist('n[1-x]')).toThrow(/bad host range "1-x" in host list "n\[1-x\]" \(expected N or N-M\)/);
    expect(() => expandHostlist('n[]')).toThrow(/bad host range "" in host list "n\[\]"/);
    expect(() => expandHostlist('n[3-1]')).toThrow(/host range "3-1" in host list "n\[3-1\]" runs backwards/);
    expect(() => expandHostlist('n[1-3,login1')).toThrow(/host list "n\[1-3,login1" has a "\[" without its "\]"/);
    expect(() => expandHostlist('n1-3],m1')).toThrow(/host list "n1-3\],m1" has an unexpected "\]" at character 5/);
    expect(() => expandHostlist('n[1[2]]')).toThrow(/unexpected "\[" at character 4/);
  });
});

describe('slurmStepNodes', () => {
  it("reads the step's node list, else the job's, and names the variable it could not read", () => {
    expect(slurmStepNodes({ SLURM_STEP_NODELIST: 'gpu[01-02]', SLURM_JOB_NODELIST: 'gpu[01-04]' })).toEqual(['gpu01', 'gpu02']);
    expect(slurmStepNodes({ SLURM_JOB_NODELIST: 'n[3-4]' })).toEqual(['n3', 'n4']);
    expect(slurmStepNodes({})).toEqual([]);
    expect(() => slurmStepNodes({ SLURM_JOB_NODELIST: 'n[2-1]' })).toThrow(/^environment variable SLURM_JOB_NODELIST: host range "2-1" in host list "n\[2-1\]" runs backwards$/);
  });
});
