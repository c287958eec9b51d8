// What a run's records carry into the history besides their numbers: the git state of WORK_DIR,
// the CI variables (never a secret-looking one), the label and kind.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ciVariables, gitState, runContext } from '../../framework/history/run-context.ts';
import { DEFAULT_GATE } from '../../framework/settings.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('run context', () => {
  it('names the commit and branch of a WORK_DIR that is a git work tree, nothing otherwise', () => {
    const head = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(gitState(root).commit).toBe(head);
    const dir = mkdtempSync(path.join(tmpdir(), 'not-git-'));
    try {
      expect(gitState(dir)).toEqual({ commit: undefined, branch: undefined });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps CI variables, upstream\'s included, and never a secret-looking one', () => {
    expect(
      ciVariables({ CI: 'true', BUILD_ID: '42', JOB_NAME: 'perf', globalVars: '{}', GITHUB_SHA: 'abc', CI_JOB_TOKEN: 'secret', GITHUB_TOKEN: 'x', HOME: '/root', CI_PIPELINE_ID: '7' }),
    ).toEqual({ CI: 'true', BUILD_ID: '42', JOB_NAME: 'perf', globalVars: '{}', GITHUB_SHA: 'abc', CI_PIPELINE_ID: '7' });
  });

  it('puts kind, label, identity and thresholds together', () => {
    const context = runContext({
      runId: 'run-1',
      history: { target: { kind: 'off' }, runKind: 'pre-merge', regression: 'fail', runLabel: 'pr-17', gate: { ...DEFAULT_GATE, branch: 'pr-17-branch' } },
      workDir: root,
      env: { BUILD_URL: 'http://ci/1' },
      identity: { transfer_backend: 'ucx' },
      thresholds: { BW: { postMerge: 0.02, preMerge: 0.04 } },
    });
    expect(context).toMatchObject({ id: 'run-1', kind: 'pre-merge', label: 'pr-17', ci: { BUILD_URL: 'http://ci/1' }, identity: { transfer_backend: 'ucx' }, thresholds: { BW: { postMerge: 0.02, preMerge: 0.04 } } });
    expect(context.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(context.branch).toBe('pr-17-branch'); // DISAGG_BRANCH before the work tree's own
  });
});
