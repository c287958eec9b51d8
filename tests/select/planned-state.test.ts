// `disagg-bench list` says what a run will make of each test in the run's own words: the state
// and reason come from framework/select/planned-state.ts, the words from the one table of test
// states that the progress, the digest and report.html print.
import { describe, expect, it } from 'vitest';
import type { PlannedTest } from '../../framework/select/plan.ts';
import { plannedReason, plannedState } from '../../framework/select/planned-state.ts';
import { STATE_WORDS } from '../../framework/results/test-states.ts';

const issue = { file: 'test_configs/nixl/perf/x.yaml', line: 3, message: 'expected a number' };
const planned = (over: Partial<PlannedTest>): PlannedTest => ({ id: 'nixl_perf_x', testType: 'nixl', category: 'perf', name: 'x', absFile: '/w/x.yaml', displayFile: 'x.yaml', issues: [], ...over }) as PlannedTest;

describe('a planned test, in the run\'s words', () => {
  it('a valid config that would get a job is waiting (WAITING), with no reason', () => {
    const t = planned({});
    expect([plannedState(t), plannedReason(t)]).toEqual(['waiting', undefined]);
    expect(STATE_WORDS[plannedState(t)].word).toBe('WAITING');
  });

  it('a config that cannot run here is skipped (SKIPPED) with its reason, the missing package named', () => {
    const skipReason = 'backend ucx needs UCX (libucp.so.0), which cannot be loaded on this machine (...); install the Debian/Ubuntu package libucx0 (apt-get install libucx0)';
    const t = planned({ skipReason });
    expect([plannedState(t), plannedReason(t)]).toEqual(['skipped', skipReason]);
    expect(STATE_WORDS[plannedState(t)].word).toBe('SKIPPED');
  });

  it('an invalid config fails (FAILED), its issues counted; skipped wins for a config of another GPU, which still counts them', () => {
    const invalid = planned({ issues: [issue, issue] });
    expect([plannedState(invalid), plannedReason(invalid)]).toEqual(['failed', 'invalid config: 2 issues, see disagg-bench validate']);
    expect(STATE_WORDS[plannedState(invalid)].word).toBe('FAILED');
    const both = planned({ issues: [issue], skipReason: 'GPU type H200 is not in supported_gpus [GB200]' });
    expect([plannedState(both), plannedReason(both)]).toEqual(['skipped', 'GPU type H200 is not in supported_gpus [GB200] (its config also has 1 issue, see disagg-bench validate)']);
  });
});
