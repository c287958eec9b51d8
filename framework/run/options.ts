// The settings `disagg-bench run` takes on its command line and from a profile, one row each. A row
// that a variable also sets names it: the command line and the profile set that variable for the
// run, so everything downstream (framework/settings.ts, the Vitest workers) reads the environment
// exactly as under `npx vitest run`. Rows without a variable are Vitest's own options.
import { schedulerHelp, schedulerNameProblem } from '../scheduler/create.ts';
import { parsePythonInt, REGRESSION_MODES, RUN_KINDS, SETTING_VARIABLES as VARIABLE } from '../settings.ts';

export interface RunOption {
  /** The option's long name (`--batch-size`), also its key in a profile (`batch-size:`). */
  name: string;
  short?: string;
  /** A switch takes no value (`--resume`); in a profile it is true or false. */
  kind: 'value' | 'switch' | 'list';
  /** The variable it sets: the environment's spelling of the same setting. */
  env?: string;
  /** What a switch sets its variable to. */
  envOn?: string;
  /** The Vitest option it sets, for rows without a variable. */
  vitest?: 'testNamePattern' | 'tagsFilter';
  /** The value, for --help. */
  arg?: string;
  help: string;
  /** The value is checked here (one sentence saying what is expected), or undefined when it is fine. */
  check?: (value: string) => string | undefined;
}

const oneOf = (allowed: readonly string[]) => (value: string) => (allowed.includes(value) ? undefined : `expected ${allowed.join(' or ')}`);

export const RUN_OPTIONS: readonly RunOption[] = [
  { name: 'test-name', short: 't', kind: 'value', vitest: 'testNamePattern', arg: 'PATTERN', help: 'only tests whose id matches PATTERN (Vitest -t)' },
  { name: 'tags', kind: 'list', vitest: 'tagsFilter', arg: 'EXPR', help: 'only tests of these tags: perf, accuracy, stress (Vitest --tags-filter; repeatable)' },
  { name: 'test-list', kind: 'value', env: VARIABLE.testList, arg: 'FILE', help: 'only the tests this list names (relative to WORK_DIR)' },
  {
    name: 'batch-size', kind: 'value', env: VARIABLE.batchSize, arg: 'N', help: 'jobs per batch (default 5; 0 = all at once)',
    check: (v) => (parsePythonInt(v) === undefined ? 'expected a whole number of jobs per batch (0 = all at once)' : undefined),
  },
  {
    name: 'scheduler', kind: 'value', env: VARIABLE.scheduler, arg: 'NAME', check: schedulerNameProblem,
    // Read when --help is printed: schedulers registered after this module loads are listed too.
    get help() {
      return schedulerHelp();
    },
  },
  { name: 'output', kind: 'value', env: VARIABLE.outputPath, arg: 'DIR', help: 'results, logs, the ledger and the history (default <package>/results)' },
  { name: 'replay', kind: 'switch', env: VARIABLE.debugMode, envOn: '1', help: 'submit nothing: replay the logs of the run in the output folder' },
  { name: 'resume', kind: 'switch', env: VARIABLE.resume, envOn: '1', help: 'continue an interrupted run: adopt its jobs, keep its results' },
  { name: 'label', kind: 'value', env: VARIABLE.runLabel, arg: 'NAME', help: 'a name for the run, kept with its records' },
  { name: 'run-kind', kind: 'value', env: VARIABLE.runKind, arg: 'KIND', help: `${RUN_KINDS.join(' or ')}: whether the run feeds later baselines`, check: oneOf(RUN_KINDS) },
  { name: 'regression', kind: 'value', env: VARIABLE.regression, arg: 'MODE', help: `${REGRESSION_MODES.join(', ')}: what a regression against the history does`, check: oneOf(REGRESSION_MODES) },
  { name: 'gate-metrics', kind: 'value', env: 'DISAGG_GATE_METRICS', arg: 'LIST', help: 'metrics that can fail the regression gate: headline (default), all, NAME, -NAME, comma-separated' },
  { name: 'branch', kind: 'value', env: 'DISAGG_BRANCH', arg: 'NAME', help: "the branch the run's records belong to (default: WORK_DIR's git branch)" },
  { name: 'baseline-branch', kind: 'value', env: 'DISAGG_BASELINE_BRANCH', arg: 'NAME', help: 'where pre-merge runs take their baselines (default main)' },
  { name: 'gpu-type', kind: 'value', env: VARIABLE.gpuType, arg: 'GPU', help: 'the GPU the run is on (default: from SLURM or NVML)' },
];

export function runOption(name: string): RunOption | undefined {
  return RUN_OPTIONS.find((o) => o.name === name);
}

/** The option's spelling for messages and --help: `-t, --test-name PATTERN`. */
export function optionSpelling(option: RunOption): string {
  return `${option.short ? `-${option.short}, ` : ''}--${option.name}${option.arg ? ` ${option.arg}` : ''}`;
}
