// What a run is, beside its tests: the facts the report's header and summary.json carry so a
// reader knows which code measured what. The run's end gathers them (framework/suite/run-end.ts:
// the git state of WORK_DIR and of this checkout, the scheduler from the job ledger); the report
// and the digest only show them. summary.json keeps them, so `disagg-bench report` rebuilding a
// run's report later shows the same header.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SUMMARY_JSON_FILE } from './digest/summary-files.ts';

/** A git work tree's state, as `git rev-parse` says it; absent fields: not a work tree, or detached. */
export interface GitFacts {
  /** The folder asked about. */
  dir: string;
  commit?: string;
  branch?: string;
}

export interface RunFacts {
  runId?: string;
  /** DISAGG_RUN_KIND: post-merge, pre-merge or local. */
  kind?: string;
  /** DISAGG_RUN_LABEL. */
  label?: string;
  /** WORK_DIR, the folder of the configs and test lists. */
  configs?: GitFacts;
  /** This checkout of disagg-bench: the code that ran the tests. */
  project?: GitFacts & { version?: string };
  /** The scheduler(s) the run's jobs went to (slurm, local...), comma-separated when several. */
  scheduler?: string;
  /** The GPU type(s) the run's tests ran as, comma-separated. */
  gpuType?: string;
  /** ISO 8601: the first test's start and the last one's end. */
  start?: string;
  end?: string;
}

/** The facts `summary.json` in `folder` carries, when it is there and says any. */
export function readRunFacts(folder: string): RunFacts | undefined {
  try {
    const summary = JSON.parse(readFileSync(path.join(folder, SUMMARY_JSON_FILE), 'utf8')) as { run?: unknown };
    return summary.run && typeof summary.run === 'object' && !Array.isArray(summary.run) ? (summary.run as RunFacts) : undefined;
  } catch {
    return undefined;
  }
}
