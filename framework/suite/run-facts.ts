// The run's facts for its report header and summary.json (results/run-facts.ts): its id, kind and
// label, the commit and branch of WORK_DIR (the configs) and of this checkout (the code that ran
// them), and the scheduler its jobs went to, as the job ledger recorded it.
import type { Settings } from '../settings.ts';
import { packageRoot } from '../settings.ts';
import type { GitFacts, RunFacts } from '../results/run-facts.ts';
import { gitState } from '../history/run-context.ts';
import { readLedger } from '../jobs/ledger.ts';
import packageJson from '../../package.json' with { type: 'json' };

const gitFacts = (dir: string): GitFacts => ({ dir, ...gitState(dir) });

export function gatherRunFacts(settings: Settings, runId: string | undefined): RunFacts {
  const schedulers = [...new Set(readLedger(settings.outputPath).filter((e) => !runId || e.run === runId).map((e) => e.scheduler))];
  const scheduler = schedulers.length ? schedulers.join(', ') : settings.scheduler;
  return {
    ...(runId && { runId }),
    kind: settings.history.runKind,
    ...(settings.history.runLabel && { label: settings.history.runLabel }),
    configs: gitFacts(settings.workDir),
    project: { ...gitFacts(packageRoot), version: packageJson.version },
    ...(scheduler && { scheduler }),
  };
}
