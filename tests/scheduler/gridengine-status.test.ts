// Grid Engine's answers parsed and mapped once (states.ts): qstat's state letters, `qstat -xml`,
// `qstat -j`'s reasons, the accounting file's records, and how a job ended. The texts are those
// Grid Engine 8.1.9 printed on this project's local cell (scripts/gridengine-local.sh).
import { describe, expect, it } from 'vitest';
import { endedStatus, liveStatus, parseAccounting, parseQstatXml, parseWaitReasons } from '../../framework/scheduler/gridengine-status.ts';
import { gridEngineEndState, gridEngineState, isTerminal } from '../../framework/scheduler/states.ts';
import { qsubArgs } from '../../framework/scheduler/gridengine.ts';

const XML = `<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>5</JB_job_number>
      <JAT_prio>0.25000</JAT_prio>
      <JB_name>sleep</JB_name>
      <JB_owner>root</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-12-07T03:35:33</JAT_start_time>
      <queue_name>disagg.q@vm</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>6</JB_job_number>
      <JB_name>sleep</JB_name>
      <state>qw</state>
      <queue_name></queue_name>
      <slots>50</slots>
    </job_list>
    <job_list state="pending">
      <JB_job_number>8</JB_job_number>
      <state>Eqw</state>
      <queue_name></queue_name>
    </job_list>
  </job_info>
</job_info>`;

const ACCOUNTING = `# Version: 8.1.9
# DO NOT MODIFY THIS FILE MANUALLY!
disagg.q:vm:root:root:job.sh:1:sge:0:1796614095:1796614106:1796614106:0:0:0:0.057170:0.044834:4524.000000:0:0:0:0:15232:5:0:824.000000:88:0:0:0:323:92:NONE:defaultdepartment:NONE:1:0:0.102004:0.000000:0.000000:NONE:0.000000:NONE:0.000000:0:0
disagg.q:vm:root:root:inh:3:sge:0:1796614129:1796614129:1796614130:0:0:1:0.000920:0.010139:4580.000000:0:0:0:0:981:0:0:0.000000:48:0:0:0:7:2:NONE:defaultdepartment:disagg:2:0:0.011059:0.000000:0.000000:-pe disagg 2:0.000000:2.localhost:0.000000:0:0
disagg.q:vm:root:root:inh:3:sge:0:1796614129:1796614129:1796614131:0:3:2:0.147650:0.074535:18084.000000:0:0:0:0:28699:0:0:0.000000:56:0:0:0:573:160:NONE:defaultdepartment:disagg:2:0:0.222185:0.000000:0.001306:-pe disagg 2:0.000000:NONE:20905984.000000:0:0
disagg.q:vm:root:root:sleep:5:sge:0:1796614533:1796614533:1796614540:100:137:7:0.0:0.0:0.0:0:0:0:0:0:0:0:0.0:0:0:0:0:0:0:NONE:defaultdepartment:NONE:1:0:0.0:0.0:0.0:NONE:0.0:NONE:0.0:0:0
`;

// A two-node nixl job on the cell's two hosts: two steps of a task on each (1.ge1 ... 2.ge2), then the job's own record.
const TWO_HOST_JOB = `disagg.q:ge1:root:root:nixl_perf_sweep_libfabric_tcp_2nodes:114:sge:0:1796624126:1796624126:1796624129:0:0:3:0.599512:0.406987:97432.000000:0:0:0:0:24886:0:0:0.000000:88:0:0:0:5050:3283:NONE:defaultdepartment:disagg.1:2:0:1.006499:0.038106:0.041348:-l h_rt=300 -pe disagg.1 2:0.000000:1.ge1:122687488.000000:0:0
disagg.q:ge2:root:root:nixl_perf_sweep_libfabric_tcp_2nodes:114:sge:0:1796624126:1796624126:1796624129:0:0:3:0.620225:0.386345:97620.000000:0:0:0:0:24230:0:0:0.000000:56:0:0:0:4724:2043:NONE:defaultdepartment:disagg.1:2:0:1.006570:0.044477:0.022024:-l h_rt=300 -pe disagg.1 2:0.000000:1.ge2:122916864.000000:0:0
disagg.q:ge1:root:root:nixl_perf_sweep_libfabric_tcp_2nodes:114:sge:0:1796624129:1796624130:1796624133:0:0:3:0.627059:0.283820:201540.000000:0:0:0:0:43868:0:0:0.000000:8:0:0:0:3773:2205:NONE:defaultdepartment:disagg.1:2:0:0.910879:0.047828:0.009794:-l h_rt=300 -pe disagg.1 2:0.000000:2.ge1:128245760.000000:0:0
disagg.q:ge2:root:root:nixl_perf_sweep_libfabric_tcp_2nodes:114:sge:0:1796624129:1796624130:1796624133:0:0:3:0.723803:0.318340:208168.000000:0:0:0:0:49197:0:0:0.000000:8:0:0:0:3926:2160:NONE:defaultdepartment:disagg.1:2:0:1.042143:0.060697:0.013811:-l h_rt=300 -pe disagg.1 2:0.000000:2.ge2:196349952.000000:0:0
disagg.q:ge2:root:root:nixl_perf_sweep_libfabric_tcp_2nodes:114:sge:0:1796624125:1796624125:1796624134:0:0:9:0.286882:0.120325:18112.000000:0:0:0:0:47341:0:0:16.000000:200:0:0:0:1015:377:NONE:defaultdepartment:disagg.1:2:0:0.407207:0.000125:0.004241:-l h_rt=300 -pe disagg.1 2:0.000000:NONE:29339648.000000:0:0`;

describe('Grid Engine states', () => {
  it('maps qstat\'s letters, the strongest deciding; none of them is terminal', () => {
    const cases: Record<string, string> = { qw: 'PENDING', hqw: 'PENDING', r: 'RUNNING', t: 'CONFIGURING', Rr: 'RUNNING', s: 'SUSPENDED', dr: 'COMPLETING', Eqw: 'PENDING', x: 'UNKNOWN' };
    for (const [letters, state] of Object.entries(cases)) {
      expect(gridEngineState(letters), letters).toBe(state);
      expect(isTerminal(gridEngineState(letters)), letters).toBe(false);
    }
  });

  it('tells how a job ended from failed, exit_status and its time limit', () => {
    const end = (failed: number, exitStatus: number, extra: { wallclockSec?: number; timeLimitSec?: number; cancelledHere?: boolean } = {}) =>
      gridEngineEndState({ failed, exitStatus, wallclockSec: extra.wallclockSec ?? 1, timeLimitSec: extra.timeLimitSec, cancelledHere: extra.cancelledHere ?? false });
    expect(end(0, 0)).toEqual({ state: 'COMPLETED', exitCode: 0 });
    expect(end(0, 3)).toEqual({ state: 'FAILED', exitCode: 3 });
    expect(end(100, 137, { cancelledHere: true })).toEqual({ state: 'CANCELLED', exitCode: 0, signal: 9 });
    expect(end(100, 137, { wallclockSec: 61, timeLimitSec: 60 })).toEqual({ state: 'TIMEOUT', exitCode: 0, signal: 9 });
    expect(end(100, 137, { wallclockSec: 5, timeLimitSec: 60 })).toEqual({ state: 'CANCELLED', exitCode: 0, signal: 9 });
    expect(end(37, 137).state).toBe('TIMEOUT');
    expect(end(26, 0).state).toBe('FAILED'); // "opening input/output file" before the job started
  });
});

describe('Grid Engine output', () => {
  it('qstat -xml: every job with its letters, queue and start', () => {
    const jobs = parseQstatXml(XML);
    expect(jobs.map((j) => [j.id, j.letters, j.queue])).toEqual([['5', 'r', 'disagg.q@vm'], ['6', 'qw', undefined], ['8', 'Eqw', undefined]]);
    expect(liveStatus(jobs[0])).toMatchObject({ id: '5', state: 'RUNNING', terminal: false, nodes: ['vm'] });
    expect(liveStatus(jobs[2], { reason: "can't chdir to /gone", error: true })).toMatchObject({ state: 'PENDING', cannotStart: "error state: can't chdir to /gone" });
  });

  it('qstat -j: the error reason first, else the first scheduling message that says something', () => {
    const text = [
      'job_number:                 6', 'scheduling info:            cannot run in PE "disagg" because it only offers 7 slots',
      'job_number:                 8', 'error reason    1:          12/07/2026 03:40:01 [0:1]: error: can\'t chdir to /gone', 'scheduling info:            Job is in error state',
      'job_number:                 9', 'scheduling info:            There are no messages available',
    ].join('\n');
    const reasons = parseWaitReasons(text);
    expect(reasons.get('6')).toEqual({ reason: 'cannot run in PE "disagg" because it only offers 7 slots', error: false });
    expect(reasons.get('8')?.error).toBe(true);
    expect(reasons.has('9')).toBe(false);
  });

  it('the accounting file: a job\'s own record, not its parallel tasks\'', () => {
    const records = parseAccounting(ACCOUNTING, new Set(['1', '3', '5', '42']));
    expect([...records.keys()].sort()).toEqual(['1', '3', '5']);
    expect(records.get('3')).toMatchObject({ failed: 0, exitStatus: 3, host: 'vm', wallclockSec: 2 });
    expect(endedStatus(records.get('3')!, { cancelledHere: false })).toMatchObject({ state: 'FAILED', terminal: true, exitCode: 3, nodes: ['vm'] });
    expect(endedStatus(records.get('5')!, { cancelledHere: true })).toMatchObject({ state: 'CANCELLED', signal: 9, reason: 'failed 100' });
  });

  it('a parallel job\'s nodes: its master\'s host, then the hosts its tasks ran on (their records come first)', () => {
    const records = parseAccounting(`${TWO_HOST_JOB}\n${ACCOUNTING}`, new Set(['114', '3']));
    expect(records.get('114')).toMatchObject({ host: 'ge2', hosts: ['ge2', 'ge1'], exitStatus: 0 });
    expect(endedStatus(records.get('114')!, { cancelledHere: false })).toMatchObject({ state: 'COMPLETED', nodes: ['ge2', 'ge1'] });
    // A job whose tasks all ran on its master's host names it once.
    expect(records.get('3')!.hosts).toEqual(['vm']);
  });
});

describe('qsub arguments', () => {
  const request = (resources: object) => ({ name: 't', scriptPath: '/j/job.sh', logDir: '/l', workDir: '/w', resources: { nodes: 1, ntasks: 1, timeLimitSec: 90, ...resources } });

  it('a job of N nodes asks the environment of its tasks per host for N times as many slots, GPUs per slot, the limit as h_rt', () => {
    const args = qsubArgs(request({ nodes: 2, ntasks: 4, ntasksPerNode: 2, gpusPerNode: 2, partition: 'big.q', account: '<account>' }));
    expect(args.join(' ')).toMatch(/^-terse -N t -S \/bin\/bash -wd \/w -o \/l\/slurm-\$JOB_ID\.out -e \/l\/slurm-\$JOB_ID\.err -V -w e -l h_rt=90 -pe disagg\.2 4 -l gpu=1 -q big\.q \S+\/gridengine-bin\/job-start \/j\/job\.sh$/);
    expect(qsubArgs(request({}))).not.toContain('-pe');
  });

  it('slots: one node keeps its tasks on one host; N nodes are N hosts of K slots; GPUs per slot rounded up', () => {
    const pe = (resources: object) => { const a = qsubArgs(request(resources)); const i = a.indexOf('-pe'); return i < 0 ? undefined : `${a[i + 1]} ${a[i + 2]}`; };
    const gpus = (resources: object) => qsubArgs(request(resources)).find((a) => a.startsWith('gpu='));
    expect(pe({ nodes: 1, ntasks: 4 })).toBe('disagg 4');
    expect(pe({ nodes: 2, ntasks: 2 })).toBe('disagg.1 2');
    expect(pe({ nodes: 2, ntasks: 3 })).toBe('disagg.2 4');
    expect(pe({ nodes: 4, ntasks: 1, ntasksPerNode: 4 })).toBe('disagg.4 16');
    expect(gpus({ nodes: 1, ntasks: 1, gpusPerNode: 4 })).toBe('gpu=4');
    expect(gpus({ nodes: 1, ntasks: 4, gpusPerNode: 4 })).toBe('gpu=1');
    expect(gpus({ nodes: 2, ntasks: 4, ntasksPerNode: 2, gpusPerNode: 3 })).toBe('gpu=2');
  });

  it('refuses sbatch\'s own arguments in one sentence', () => {
    expect(() => qsubArgs(request({ extraArgs: ['--exclusive'] }))).toThrow(/slurm\.extra_args are sbatch arguments \(--exclusive\); Grid Engine cannot take them/);
  });
});
