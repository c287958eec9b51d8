// The scheduler registry's open edges: the names SCHEDULER and --scheduler take, and the order a
// run with SCHEDULER unset tries schedulers in, come from the registrations alone.
import { afterEach, describe, expect, it } from 'vitest';
import { schedulerHelp, schedulerKind, schedulerNameProblem, schedulerProblem } from '../../framework/scheduler/create.ts';
import { autoSelectOrder, registerScheduler, schedulerNames, unregisterScheduler, type SchedulerDefinition } from '../../framework/scheduler/registry.ts';
import { runOption } from '../../framework/run/options.ts';

const local = (): SchedulerDefinition => {
  const found = autoSelectOrder().find((d) => d.name === 'local');
  if (!found) throw new Error('the local scheduler is not registered');
  return found;
};

afterEach(() => {
  unregisterScheduler('site-a');
  unregisterScheduler('site-b');
});

describe('the scheduler registry', () => {
  it('a scheduler registered after the built-in ones is chosen by its rank, not its place in the registration order', () => {
    const none = { PATH: '' };
    expect(schedulerKind({ debugMode: false, scheduler: undefined }, none)).toBe('local');
    registerScheduler({ ...local(), name: 'site-a', description: 'a site scheduler', autoSelect: { rank: 15, available: (env) => env.SITE_A === '1', when: 'SITE_A=1' } });
    registerScheduler({ ...local(), name: 'site-b', description: 'another', autoSelect: { rank: 12, available: (env) => env.SITE_B === '1', when: 'SITE_B=1' } });
    expect(schedulerKind({ debugMode: false, scheduler: undefined }, { ...none, SITE_A: '1' })).toBe('site-a');
    expect(schedulerKind({ debugMode: false, scheduler: undefined }, { ...none, SITE_A: '1', SITE_B: '1' })).toBe('site-b');
    const ranks = autoSelectOrder().map((d) => d.autoSelect.rank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(schedulerProblem({ SCHEDULER: 'pbs' })).toContain('site-b when SITE_B=1, then site-a when SITE_A=1');
  });

  it('--scheduler takes every registered name, one registered later too, and its help lists them', () => {
    const option = runOption('scheduler')!;
    registerScheduler({ ...local(), name: 'site-a', description: 'a site scheduler', autoSelect: undefined });
    for (const name of schedulerNames()) expect(option.check!(name), name).toBeUndefined();
    expect(option.check!('pbs')).toBe(schedulerNameProblem('pbs'));
    expect(option.check!('pbs')).toMatch(/ or site-a$/);
    expect(option.help).toBe(schedulerHelp());
    expect(option.help).toMatch(/ or site-a \(default: /);
  });
});
