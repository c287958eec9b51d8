// The git side of a bisection: the repository holding WORK_DIR, the commits between a good and a
// bad one, and a work tree of its own in a temporary folder where each step's commit is checked
// out. The user's repository is left as it was: its branch, HEAD, index and working tree are never
// touched (a linked work tree has its own HEAD and index), and the linked work tree is removed and
// pruned at the end, so `git worktree list` is as before.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { DisaggBenchError, UsageError } from '../../../runners/common/errors.ts';

export class GitError extends DisaggBenchError {
  override name = 'GitError';
}

function git(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 }).trim();
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new GitError(`git ${args.join(' ')}: ${(e.stderr || e.message).trim().split('\n').at(-1)}`, { place: cwd });
  }
}

export interface Repository {
  /** The work tree's top folder. */
  root: string;
  /** WORK_DIR relative to it ('' when it is the top). */
  prefix: string;
}

/** The git work tree holding `workDir`; a usage error when there is none. */
export function repositoryOf(workDir: string): Repository {
  let root: string;
  try {
    root = git(workDir, ['rev-parse', '--show-toplevel']);
  } catch {
    throw new UsageError(`WORK_DIR ${workDir} is not in a git work tree: bisect over commits needs one (or list what to run with --refs or --images)`);
  }
  return { root, prefix: git(workDir, ['rev-parse', '--show-prefix']) };
}

/** The commit a ref names (a usage error naming the option when it names none). */
export function commitOf(repo: Repository, ref: string, option: string): string {
  try {
    return git(repo.root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  } catch {
    throw new UsageError(`--${option}: '${ref}' names no commit of ${repo.root}`, option);
  }
}

/** The commits after `good` up to `bad` on bad's first-parent line, oldest first (git bisect --first-parent). */
export function commitsBetween(repo: Repository, good: string, bad: string): string[] {
  if (good === bad) throw new UsageError(`the good and the bad commit are the same (${good.slice(0, 12)}): nothing lies between them`);
  try {
    git(repo.root, ['merge-base', '--is-ancestor', good, bad]);
  } catch {
    throw new UsageError(`the good commit ${good.slice(0, 12)} is not an ancestor of the bad commit ${bad.slice(0, 12)}: bisect searches the commits from good to bad`);
  }
  const list = git(repo.root, ['rev-list', '--reverse', '--first-parent', '--ancestry-path', `${good}..${bad}`]);
  return list === '' ? [] : list.split('\n');
}

/** `abc123def456 subject`, for progress lines and the result. */
export function describeCommit(repo: Repository, commit: string): { commit: string; short: string; subject: string } {
  const [short, ...subject] = git(repo.root, ['log', '-1', '--format=%h %s', commit]).split(' ');
  return { commit, short, subject: subject.join(' ') };
}

/** A linked work tree in `folder`, detached, for the steps' checkouts. */
export class StepWorktree {
  private constructor(
    private readonly repo: Repository,
    readonly folder: string,
  ) {}

  static create(repo: Repository, folder: string, commit: string): StepWorktree {
    git(repo.root, ['worktree', 'add', '--detach', '--quiet', folder, commit]);
    return new StepWorktree(repo, folder);
  }

  /** WORK_DIR inside the work tree. */
  get workDir(): string {
    return path.join(this.folder, this.repo.prefix);
  }

  checkout(commit: string): void {
    git(this.folder, ['checkout', '--detach', '--quiet', '--force', commit]);
    git(this.folder, ['clean', '-fdxq']);
  }

  /** Removes the work tree and git's record of it. */
  remove(): void {
    try {
      git(this.repo.root, ['worktree', 'remove', '--force', '--force', this.folder]);
    } finally {
      git(this.repo.root, ['worktree', 'prune']);
    }
  }
}
