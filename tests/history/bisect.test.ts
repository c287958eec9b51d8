// `disagg-bench history bisect` as a user runs it: the real bin, a real git repository of 16
// commits (tests/fixtures/history/bisect-repo.ts: one disagg config whose job's figure comes from
// the repository's files, the serving stack around it a STAND-IN), the good and bad runs made by
// `disagg-bench run` into a real DuckDB history, every step a real run on the local scheduler.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterEnv, slurmDisabled } from '../setup/cluster.ts';
import { BISECT_METRIC, BISECT_TEST, git, makeBisectRepo, type BisectRepo } from '../fixtures/history/bisect-repo.ts';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin/disagg-bench.js');
const scratch = mkdtempSync(path.join(tmpdir(), 'history-bisect-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const output = path.join(scratch, 'out');
const baseEnv = (repo: string) => ({ WORK_DIR: repo, OUTPUT_PATH: output, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_POLL_MAX_SEC: '1', DISAGG_BATCH_SIZE: '0' });

/** A run of the test at the repository's current checkout, into the shared history; its run id. */
async function runAt(repo: string, commit: string): Promise<string> {
  git(repo, 'checkout', '--quiet', '--force', commit);
  const r = await execa('node', [bin, 'run', 'disagg', '--output', output, '--scheduler', 'local'], { cwd: scratch, env: baseEnv(repo), reject: false, all: true, timeout: 240_000 });
  expect(r.exitCode, r.all).toBe(0);
  return path.basename(readlinkSync(path.join(output, 'latest')));
}

/** `history bisect` of the test's metric on the local scheduler; `own` replaces the test id and metric. */
/** How long a SIGTERM'd bisect may take to stop its step's run and clean up before execa's SIGKILL (its default, 5 s, is too short on a loaded box). */
const SIGTERM_GRACE_MS = 120_000;
const bisect = (repo: string, args: string[], own = [BISECT_TEST, '--metric', BISECT_METRIC], env: Record<string, string> = {}) =>
  execa('node', [bin, 'history', 'bisect', ...own, '--scheduler', 'local', ...args], { cwd: scratch, env: { ...baseEnv(repo), ...env }, reject: false, timeout: 500_000, forceKillAfterDelay: SIGTERM_GRACE_MS });

/** What the user's repository looks like: branch, HEAD, status (untracked files too), work trees. */
const stateOf = (repo: string) => ({
  branch: git(repo, 'symbolic-ref', '--short', 'HEAD'),
  head: git(repo, 'rev-parse', 'HEAD'),
  status: git(repo, 'status', '--porcelain', '--untracked-files=all'),
  worktrees: git(repo, 'worktree', 'list', '--porcelain'),
  notes: readFileSync(path.join(repo, 'notes.txt'), 'utf8'),
});

describe('disagg-bench history bisect', () => {
  let planted: BisectRepo;
  let goodRun: string;
  let badRun: string;

  // The repository, a good run at its first commit and a bad one at its last, in the history.
  beforeAll(async () => {
    planted = await makeBisectRepo(path.join(scratch, 'planted'), 16, 11);
    goodRun = await runAt(planted.repo, planted.commits[0]);
    badRun = await runAt(planted.repo, planted.commits[15]);
    git(planted.repo, 'checkout', '--quiet', 'main');
  }, 600_000);

  it('names the commit of a planted slowdown among 16 in at most 4 steps, and leaves the repository as it was', { timeout: 900_000 }, async () => {
    const { repo, commits } = planted;
    // The user's work in progress: an uncommitted change and an untracked file.
    writeFileSync(path.join(repo, 'notes.txt'), 'edited, not committed\n');
    writeFileSync(path.join(repo, 'scratch.txt'), 'untracked\n');
    const before = stateOf(repo);

    const r = await bisect(repo, ['--good', goodRun, '--bad', badRun, '--repeat', '2', '--json']);
    expect(r.exitCode, `${r.stderr}\n${r.stdout}`).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ test: BISECT_TEST, metric: BISECT_METRIC, higherIsBetter: false, candidates: 15, outcome: 'found', found: true, maybe: [] });
    expect(result.firstBad.commit).toBe(commits[10]);
    expect(result.firstBad.subject).toBe('commit 11: the planted slowdown');
    expect(result.firstBad.values).toHaveLength(2);
    for (const v of result.firstBad.values) expect(v).toBeGreaterThan(140);
    expect(result.steps.length).toBeGreaterThan(0);
    // The bad commit was measured as an end: it is no step.
    expect(result.steps.length).toBeLessThanOrEqual(4);
    for (const step of result.steps) {
      const position = commits.indexOf(step.commit);
      expect(step.verdict, JSON.stringify(step)).toBe(position >= 10 ? 'bad' : 'good');
      expect(step.values).toHaveLength(2);
    }
    expect(result.good).toMatchObject({ ref: commits[0], runs: [goodRun] });
    expect(result.bad).toMatchObject({ ref: commits[15], runs: [badRun] });
    // One progress line per step, on stderr.
    expect(r.stderr.match(/^bisect: step \d+\/~\d+ {2}\w+ commit \d+.*: [\d.]+, [\d.]+ -> (good|bad)/gm)).toHaveLength(result.steps.length);
    expect(stateOf(repo)).toEqual(before);
    // The work in progress put away again, for the tests below.
    git(repo, 'checkout', '--quiet', '--', 'notes.txt');
    rmSync(path.join(repo, 'scratch.txt'));
  });

  it('reports none when the history between good and bad has no real change', { timeout: 900_000 }, async () => {
    const { repo, commits } = planted;
    // Commits 1 to 10 change nothing the job measures: a run at commit 5 is as good as one at 1.
    const unchanged = await runAt(repo, commits[4]);
    git(repo, 'checkout', '--quiet', 'main');
    const none = await bisect(repo, ['--good', goodRun, '--bad', unchanged, '--json']);
    expect(none.exitCode, none.stderr).toBe(0);
    const nothing = JSON.parse(none.stdout);
    expect(nothing).toMatchObject({ outcome: 'nothing', found: false, firstBad: null, steps: [], reason: expect.stringMatching(/^nothing to search: bad is [-+][\d.]+% against good/) });
    // Both ends measured again (at least 3 runs each), beside the values the history holds.
    expect(nothing.good.measured.length).toBeGreaterThanOrEqual(3);
    expect(nothing.bad.measured.length).toBeGreaterThanOrEqual(3);

    // Bad values claimed for commit 5 that do not reproduce: commit 5 measured again is as good as commit 1.
    const claimed = await bisect(repo, ['--good', goodRun, '--bad', `${commits[4]}:150,151`]);
    expect(claimed.exitCode, claimed.stderr).toBe(0);
    expect(claimed.stdout).toMatch(/^nothing to search: bad is .*; the values given for bad \(150\.00, 151\.00\) were not reproduced$/m);
    expect(claimed.stderr).not.toMatch(/-> bad/);
  });

  it('on SIGTERM stops the step in flight, removes its work tree and exits 143', { timeout: 300_000 }, async () => {
    const { repo, commits } = planted;
    const before = stateOf(repo);
    const kept = path.join(scratch, 'kept');
    const child = bisect(repo, ['--good', goodRun, '--bad', `${commits[15]}:150,151`, '--output', kept]);
    // The first run (of the good end) has opened its folder: its job is being submitted or running.
    const started = path.join(kept, 'good', 'run-1', 'latest');
    const deadline = Date.now() + 120_000;
    while (!existsSync(started) && child.exitCode === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(started)).toBe(true);
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/^bisect: SIGTERM: stopping the step's run, then removing the work tree$/m);
    expect(r.stdout).toMatch(/interrupted \(SIGTERM\)/);
    expect(stateOf(repo)).toEqual(before);
    // Nothing of the step's run is left running.
    const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(kept));
    expect(left).toEqual([]);
  });

  it.skipIf(slurmDisabled)('bisects through the real SLURM cluster', { timeout: 900_000 }, async () => {
    const { repo, commits } = planted;
    const kept = path.join(scratch, 'slurm-steps');
    // The later --scheduler wins, as on any command line.
    const r = await bisect(repo, ['--good', goodRun, '--bad', `${commits[15]}:150,151`, '--scheduler', 'slurm', '--output', kept, '--json'], undefined, clusterEnv());
    expect(r.exitCode, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ found: true, firstBad: { commit: commits[10] } });
    expect(result.steps.length).toBeLessThanOrEqual(5);
    // Every step's job went through SLURM.
    const ledgers = result.steps.map((s: { step: number }) => readFileSync(path.join(kept, `step-${s.step}`, 'run-1', 'latest', 'ledger.jsonl'), 'utf8'));
    for (const ledger of ledgers) expect(ledger).toMatch(/"scheduler":"slurm"/);
  });

  it('refuses --images after the first run when the job does not start in the image', { timeout: 300_000 }, async () => {
    // The stand-in config starts its steps without srun (launch.launcher: direct): no image is used.
    // The first run is the good end's, measured again in its image.
    const image = 'registry.example/engine:bisect-a';
    const r = await bisect(planted.repo, ['--good', `${image}:100,101`, '--bad', 'registry.example/engine:bisect-b:150,151', '--images', 'registry.example/engine:bisect-b']);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(
      `disagg-bench history bisect: --images: the job of ${BISECT_TEST} does not start in the image ${image} (its job script names no container image), so an image changes nothing it runs; bisect commits or --refs instead`,
    );
  });

  it('refuses a bad argument in one line with exit 2', { timeout: 300_000 }, async () => {
    const { repo } = planted;
    const cases: [string[], RegExp, string[]?][] = [
      [['--good', 'no-such-run', '--bad', badRun], /--good "no-such-run": no run with the id or label 'no-such-run'/],
      [['--good', goodRun, '--bad', badRun], /--metric: in run .*, disagg_perf_step it yielded no NOT_A_METRIC \(it yielded [^)]*STEP_LATENCY_MS/, [BISECT_TEST, '--metric', 'NOT_A_METRIC']],
      [['--good', goodRun, '--bad', goodRun], /--good and --bad are both/],
      [['--good', goodRun, '--bad', `${planted.commits[0]}:1`], /--good and --bad name the same commit|the good and the bad commit are the same/],
      // A nixl job runs this host's engine: no image changes it.
      [['--good', 'img:1:100', '--bad', 'img:2:150', '--images', 'img:1,img:2'], /--images: nixl tests have no container image setting/, ['nixl_perf_x', '--metric', 'AVG_LATENCY_PER_ITER_S']],
    ];
    for (const [args, says, own] of cases) {
      const r = await bisect(repo, args, own);
      expect(r.exitCode, r.stderr).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(says);
    }
  });
});
