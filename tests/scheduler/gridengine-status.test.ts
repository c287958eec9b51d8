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
});

describe('qsub arguments', () => {
  const request = (resources: object) => ({ name: 't', scriptPath: '/j/job.sh', logDir: '/l', workDir: '/w', resources: { nodes: 1, ntasks: 1, timeLimitSec: 90, ...resources } });

  it('a job of several tasks asks the parallel environment for them, GPUs once per job, the limit as h_rt', () => {
    const args = qsubArgs(request({ nodes: 2, ntasks: 4, ntasksPerNode: 2, gpusPerNode: 2, partition: 'big.q', account: '<account>' }));
    expect(args.join(' ')).toMatch(/^-terse -N t -S \/bin\/bash -wd \/w -o \/l\/slurm-\$JOB_ID\.out -e \/l\/slurm-\$JOB_ID\.err -V -w e -l h_rt=90 -pe disagg 4 -l gpu=4 -q big\.q \S+\/gridengine-bin\/job-start \/j\/job\.sh$/);
    expect(qsubArgs(request({}))).not.toContain('-pe');
  });

  it('refuses sbatch\'s own arguments in one sentence', () => {
    expect(() => qsubArgs(request({ extraArgs: ['--exclusive'] }))).toThrow(/slurm\.extra_args are sbatch arguments \(--exclusive\); Grid Engine cannot take them/);
  });
});
