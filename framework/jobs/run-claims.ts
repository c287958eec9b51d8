// Two runs of the same tests on one OUTPUT_PATH would share each test's log folder: the second
// would move the first's live logs aside (scheduler/log-folder.ts) and both would judge, record and replace the
// same test's files. So before submitting anything, a run claims its tests in
// OUTPUT_PATH/runs/<run id>.<test type>.json; a test another live run has claimed is refused,
// naming that run. Runs with different tests share an OUTPUT_PATH as before.
//
// A claim is live while its process is (same host: the pid exists and started when the claim
// says) or, for a run on another host sharing the folder, while it refreshes the claim's time
// (every HEARTBEAT_MS; a claim not refreshed for STALE_MS is taken for a run that died).
// A run killed with SIGKILL leaves a claim that is stale at once on its host.
import { readdirSync, readFileSync, rmdirSync, rmSync, statSync, utimesSync } from 'node:fs';
import { processStat } from '../../runners/common/proc.ts';
import { hostname } from 'node:os';
import path from 'node:path';
import { withFileLock } from '../results/file-lock.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';

export const CLAIMS_FOLDER = 'runs';
const HEARTBEAT_MS = 30_000;
const STALE_MS = 120_000;

export interface RunClaimFile {
  run: string;
  testType: string;
  pid: number;
  /** The process's start time (/proc/<pid>/stat, clock ticks since boot): a reused pid is not the run. */
  pidStart?: string;
  host: string;
  startedAt: string;
  tests: string[];
}

/** Another live run that holds a test. */
export interface ClaimHolder {
  run: string;
  pid: number;
  host: string;
  startedAt: string;
}

function isLive(claim: RunClaimFile, file: string): boolean {
  if (claim.host !== hostname()) {
    try {
      return Date.now() - statSync(file).mtimeMs < STALE_MS;
    } catch {
      return false;
    }
  }
  const start = processStat(claim.pid)?.start;
  return start !== undefined && (claim.pidStart === undefined || claim.pidStart === start);
}

function readClaim(file: string): RunClaimFile | undefined {
  try {
    const claim = JSON.parse(readFileSync(file, 'utf8')) as RunClaimFile;
    return typeof claim.run === 'string' && Array.isArray(claim.tests) ? claim : undefined;
  } catch {
    return undefined; // being replaced, or not ours: ignored
  }
}

/** How a refused test says who holds it. */
export function describeHolder(holder: ClaimHolder, outputPath: string): string {
  return (
    `run ${holder.run} (pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}) is running this test on ` +
    `OUTPUT_PATH=${outputPath}; two runs of one test would share its log folder and records: wait for that run to end, or use another OUTPUT_PATH`
  );
}

export class RunClaim {
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(readonly file: string) {
    this.heartbeat = setInterval(() => {
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // the folder went away: the run's own writes will say so
      }
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Claims `tests` for this run; returns the claim and, for each test another live run holds, that
   * run (those tests are not claimed and must not run). Stale claims are removed on the way.
   */
  static async take(outputPath: string, run: string, testType: string, tests: string[]): Promise<{ claim: RunClaim; refused: Map<string, ClaimHolder> }> {
    const folder = path.join(outputPath, CLAIMS_FOLDER);
    const file = path.join(folder, `${run}.${testType}.json`.replace(/[^A-Za-z0-9_.-]/g, '_'));
    const refused = new Map<string, ClaimHolder>();
    // The folder goes when its last claim is released (release()); one removed under this take is made again.
    for (let attempt = 1; ; attempt++) {
      try {
        await withFileLock(path.join(folder, 'claims'), async () => {
          let names: string[] = [];
          try {
            names = readdirSync(folder).filter((n) => n.endsWith('.json'));
          } catch {
            // no claims yet
          }
          for (const name of names) {
            const other = path.join(folder, name);
            const claim = readClaim(other);
            if (!claim || claim.run === run) continue;
            if (!isLive(claim, other)) {
              rmSync(other, { force: true });
              continue;
            }
            for (const test of claim.tests) if (!refused.has(test)) refused.set(test, { run: claim.run, pid: claim.pid, host: claim.host, startedAt: claim.startedAt });
          }
          const mine: RunClaimFile = {
            run, testType, pid: process.pid, pidStart: processStat(process.pid)?.start, host: hostname(), startedAt: new Date().toISOString(),
            tests: tests.filter((t) => !refused.has(t)),
          };
          writeWholeSync(file, `${JSON.stringify(mine, null, 2)}\n`);
        });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw error;
        refused.clear();
      }
    }
    for (const test of [...refused.keys()]) if (!tests.includes(test)) refused.delete(test);
    return { claim: new RunClaim(file), refused };
  }

  release(): void {
    clearInterval(this.heartbeat);
    rmSync(this.file, { force: true });
    // The last claim out removes the folder: a finished run leaves no empty runs/ in its folder.
    try {
      rmdirSync(path.dirname(this.file));
    } catch {
      // another run's claim (or its lock) is still there
    }
  }
}
