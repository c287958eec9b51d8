// What a run's records carry into the history besides their numbers: the run id and kind, the
// user's DISAGG_RUN_LABEL, the git commit and branch of the configs (WORK_DIR) when it is a git
// work tree, and the CI variables present, as upstream's get_job_info reads BUILD_ID, BUILD_URL,
// JOB_NAME, HOST_NODE_NAME, gitlabCommit and globalVars (perf_regression_utils.py). Secret-looking
// variables (framework/secrets.ts) are never kept.
import { execFileSync } from 'node:child_process';
import type { HistorySettings } from '../settings.ts';
import type { RecordRunContext } from '../results/json.ts';
import { isSecretName } from '../secrets.ts';

/** CI variables worth keeping (Jenkins as upstream's CI, GitHub Actions, GitLab CI, generic). */
const CI_VARIABLE = /^(CI|BUILD_ID|BUILD_URL|BUILD_NUMBER|JOB_NAME|JOB_URL|HOST_NODE_NAME|BRANCH_NAME|GIT_COMMIT|GIT_BRANCH|CHANGE_ID|CHANGE_URL|gitlabCommit|globalVars|stageName|GITHUB_[A-Z_]+|CI_[A-Z_]+|GITLAB_CI|BUILDKITE_[A-Z_]+)$/;

export function ciVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => CI_VARIABLE.test(e[0]) && !isSecretName(e[0]) && typeof e[1] === 'string' && e[1] !== ''));
}

const gitCache = new Map<string, { commit?: string; branch?: string }>();

/** Commit and branch of the work tree holding `dir`; nothing when it is not one (or git is missing). */
export function gitState(dir: string): { commit?: string; branch?: string } {
  const cached = gitCache.get(dir);
  if (cached) return cached;
  const git = (args: string[]) => {
    try {
      return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim() || undefined;
    } catch {
      return undefined;
    }
  };
  const commit = git(['rev-parse', 'HEAD']);
  const branch = commit ? git(['rev-parse', '--abbrev-ref', 'HEAD']) : undefined;
  const state = { commit, branch: branch === 'HEAD' ? undefined : branch };
  gitCache.set(dir, state);
  return state;
}

export interface RunContextInput {
  runId: string;
  history: HistorySettings;
  workDir: string;
  env?: NodeJS.ProcessEnv;
  identity?: Record<string, string | number>;
  thresholds?: RecordRunContext['thresholds'];
  /** The metrics that gate (gate-metrics.ts). */
  gate?: string[];
}

export function runContext(input: RunContextInput): RecordRunContext {
  const git = gitState(input.workDir);
  const commit = git.commit;
  // DISAGG_BRANCH first: a CI checkout is often a detached HEAD, and a PR's branch is not main.
  const branch = input.history.gate?.branch ?? git.branch;
  const ci = ciVariables(input.env ?? process.env);
  return {
    id: input.runId,
    kind: input.history.runKind,
    ...(input.history.runLabel ? { label: input.history.runLabel } : {}),
    ...(commit ? { commit } : {}),
    ...(branch ? { branch } : {}),
    ...(Object.keys(ci).length ? { ci } : {}),
    ...(input.identity && Object.keys(input.identity).length ? { identity: input.identity } : {}),
    ...(input.thresholds && Object.keys(input.thresholds).length ? { thresholds: input.thresholds } : {}),
    ...(input.gate ? { gate: input.gate } : {}),
  };
}
