// `disagg-bench run [TYPE...] [options]`: the suite through Vitest's Node API (createVitest, start,
// close), in this process, so the run owns its process from the first millisecond:
// bin/disagg-bench.js answers SIGINT, SIGTERM and SIGHUP while the CLI loads, and
// suite/cancellation.ts (the one place that ends a run, whatever stage it is at) takes them over;
// once the suite runs, a signal cancels it through Vitest's cancelCurrentRun. Settings come from
// the command line, then the environment, then a profile (profile.ts), then the defaults
// (resolve.ts); the run prints the ones that are not defaults once at its start. Each run has its
// own folder (run-folder.ts). The end-of-run writes (history, report.html) happen whatever
// reporters are named: the project's reporter is always added to them.
import path from 'node:path';
import { readArgs, type OptionSpec } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import type { CancelReason } from 'vitest';
import { cancelRunsThroughVitest, interruptedBecause, takeSignalsForRun, type RunCancel } from '../suite/cancellation.ts';
import { packageRoot, SettingsError, type Settings } from '../settings.ts';
import { checkRunEnvironment, isUserInputError } from '../suite/env-check.ts';
import { testTypeNames } from '../contract/names.ts';
import { allTestTypeNames } from '../contract/extension-types.ts';
import { optionSpelling, RUN_OPTIONS } from './options.ts';
import { loadProfile, PROFILE_FILE, ProfileError, type Profile } from './profile.ts';
import { describeSources, inUsersWords, resolveRun, type CommandLineSettings, type SettingSource } from './resolve.ts';
import { outputFileOption, takeOutputFiles } from './reporter-files.ts';
import { appendToCumulativeCsv, openRunFolder, runFolderEnv } from './run-folder.ts';
import { loadExtensions } from '../config/extensions.ts';

/** The reporter that appends the history and writes report.html at the run's end. */
export const PROJECT_REPORTER = './framework/suite/reporter.ts';

const width = RUN_OPTIONS.reduce((w, o) => Math.max(w, optionSpelling(o).length), 0);
export const usage = `usage: disagg-bench run [TYPE...] [options]
  Runs the configs under test_configs/<TYPE>/ (every test type when none is named: ${testTypeNames.join(', ')})
  through Vitest, as \`npx vitest run --project TYPE\` does. Ctrl-C, SIGTERM or SIGHUP at any moment
  cancels every job the run submitted, names the tests not run and exits 130, 143 or 129;
  --resume continues the run.
${RUN_OPTIONS.map((o) => `  ${optionSpelling(o).padEnd(width)}  ${o.help}${o.env ? ` (${o.env})` : ''}`).join('\n')}
  ${'--profile NAME'.padEnd(width)}  the settings of profile NAME in WORK_DIR/${PROFILE_FILE}
  ${'--reporter NAME'.padEnd(width)}  a Vitest reporter (repeatable); the history and report.html are written all the same
  ${'--outputFile.NAME=FILE'.padEnd(width)}  where reporter NAME writes (Vitest's option; --outputFile FILE: every such reporter);
  ${''.padEnd(width)}  default for junit and json: junit.xml, vitest-report.json in the run's folder
  Precedence: the command line, then the environment, then the profile, then the default.`;

const spec = {
  options: {
    ...Object.fromEntries(RUN_OPTIONS.map((o) => [o.name, { type: o.kind === 'switch' ? 'boolean' : 'string', ...(o.short ? { short: o.short } : {}), ...(o.kind === 'list' ? { multiple: true } : {}) }])),
    profile: { type: 'string' },
    reporter: { type: 'string', multiple: true },
  } as OptionSpec,
  positionals: true,
} as const;

export const args = { options: spec.options };

function commandLineSettings(values: Record<string, unknown>): CommandLineSettings {
  const settings: CommandLineSettings = { values: new Map(), lists: new Map() };
  for (const option of RUN_OPTIONS) {
    const value = values[option.name];
    if (value === undefined || value === false) continue;
    if (option.kind === 'list') settings.lists.set(option.name, (value as string[]).flatMap((v) => v.split(',')).filter(Boolean));
    else if (option.kind === 'switch') settings.values.set(option.name, 'true');
    else {
      const problem = option.check?.(value as string);
      if (problem) throw new UsageError(`--${option.name} ${JSON.stringify(value)}: ${problem}`, option.name);
      // A folder given on the command line is the caller's: relative to where they are.
      settings.values.set(option.name, option.name === 'output' ? path.resolve(value as string) : (value as string));
    }
  }
  return settings;
}

/** The profile asked for; its file's problems are a usage error (exit 2), as a bad option is. */
function profileOrUsageError(workDir: string, name: string): Profile {
  try {
    return loadProfile(workDir, name);
  } catch (error) {
    if (error instanceof ProfileError) throw new SettingsError(error.message.split('\n'));
    throw error;
  }
}

/** The run's settings, checked as the global setup checks them; a problem is a SettingsError in the user's words. */
async function checkedSettings(sources: readonly SettingSource[]): Promise<Settings> {
  try {
    return (await checkRunEnvironment(process.env)).settings;
  } catch (error) {
    if (!isUserInputError(error)) throw error;
    const lines = error instanceof SettingsError ? error.problems : [error.message];
    throw new SettingsError(lines.map((line) => inUsersWords(line, sources)));
  }
}

export async function run(argv: string[]): Promise<number> {
  const outputFiles = takeOutputFiles(argv);
  const { values, positionals } = readArgs(outputFiles.rest, spec);
  const workDir = path.resolve(process.env.WORK_DIR || packageRoot);
  // WORK_DIR's extensions first: a test type, --scheduler and a profile may name what one registers.
  await loadExtensions(workDir);
  for (const type of positionals) {
    if (!allTestTypeNames().includes(type)) throw new UsageError(`unknown test type ${JSON.stringify(type)}: expected ${allTestTypeNames().join(', ')}`);
  }
  const commandLine = commandLineSettings(values);
  const profile: Profile | undefined = typeof values.profile === 'string' ? profileOrUsageError(workDir, values.profile) : undefined;
  const resolved = resolveRun(commandLine, process.env, profile);
  // Up to here bin's early handler answered a signal (nothing has been made yet); from here this run's.
  takeSignalsForRun();
  Object.assign(process.env, resolved.env);
  for (const line of describeSources(resolved.sources)) console.log(line);
  // Everything the run takes checked before a folder is made or `latest` moves (a refused command
  // leaves OUTPUT_PATH as it was): the variables, GPU type, test list, OUTPUT_PATH; each problem in
  // the words the user gave it (--gpu-type, not GPU_TYPE), exit 2.
  const settings = await checkedSettings(resolved.sources);
  const run = openRunFolder(settings.outputPath, settings.resume ? '--resume' : settings.debugMode ? '--replay' : undefined);
  Object.assign(process.env, runFolderEnv(run, process.env));
  console.log(`disagg-bench run: run ${run.runId}, folder ${run.folder}`);
  // On every way out, an interruption's process.exit included: the rows written so far join the cumulative CSV.
  process.on('exit', () => {
    try {
      appendToCumulativeCsv(run);
    } catch (error) {
      process.stderr.write(`disagg-bench run: ${run.root}/perf_script_test_results.csv: the run's rows could not be appended: ${(error as Error).message}\n`);
    }
  });

  // Piped into a CI log, no colour codes (Vitest colours whenever CI is set); FORCE_COLOR keeps them.
  if (!process.stdout.isTTY && process.env.FORCE_COLOR === undefined) process.env.NO_COLOR ??= '1';
  const { createVitest } = await import('vitest/node');
  const given = (values.reporter as string[] | undefined) ?? [];
  const outputFile = outputFileOption(given, outputFiles, run.folder);
  for (const [reporter, file] of Object.entries(outputFile ?? {})) console.log(`disagg-bench run: the ${reporter} reporter writes ${file}`);
  // What `vitest run` sets before it creates its Vitest.
  process.env.TEST = 'true';
  process.env.VITEST = 'true';
  process.env.NODE_ENV ??= 'test';
  const vitest = await withoutVitestSignalExit(() => createVitest('test', {
    root: packageRoot,
    config: path.join(packageRoot, 'vitest.config.ts'),
    run: true,
    watch: false,
    project: positionals.length > 0 ? positionals : allTestTypeNames(),
    ...(resolved.testNamePattern !== undefined ? { testNamePattern: resolved.testNamePattern } : {}),
    ...(resolved.tagsFilter ? { tagsFilter: resolved.tagsFilter } : {}),
    // Reporters named here replace the config's, as on Vitest's command line; the project's own is
    // added back, so the history and report.html never depend on which reporters a CI names.
    ...(given.length > 0 ? { reporters: [...given, PROJECT_REPORTER] } : {}),
    ...(outputFile ? { outputFile } : {}),
  }));
  // A signal from here on cancels the run through Vitest (suite/cancellation.ts).
  const ended = cancelRunsThroughVitest((why) => void vitest.cancelCurrentRun(why as CancelReason));
  try {
    await vitest.start();
  } catch (error) {
    process.exitCode = 1;
    vitest.logger.printError(error, { fullStack: true, type: 'Unhandled Error' });
  } finally {
    await vitest.close();
  }
  const cancelled = ended();
  if (cancelled) await sayCancelledRun(cancelled, run.folder, run.runId);
  const code = cancelled?.exitCode ?? (typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0));
  // What Vitest's own command line does after a run: whatever still holds the event loop open (a
  // reporter's stray handle) must not keep a finished run alive; its teardown has already run.
  setTimeout(() => process.exit(code), vitest.config.teardownTimeout).unref();
  return code;
}

/**
 * Runs `create` without the SIGINT and SIGTERM handlers it adds: Vitest's logger exits the process
 * a millisecond after either, and no option turns that off; this run ends itself on a signal.
 */
async function withoutVitestSignalExit<T>(create: () => Promise<T>): Promise<T> {
  const before = new Map(STOP_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const created = await create();
  for (const signal of STOP_SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.off(signal, listener as () => void);
  }
  return created;
}
const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** After a run cancelled through Vitest: the tests it did not run, as results.json names them, and how to continue. */
async function sayCancelledRun(cancelled: RunCancel, folder: string, runId: string): Promise<void> {
  // Loaded only here: what a cancelled run's end reads, not what every run's start pays for.
  const [{ notRunListedIn, sayNotRun, stderrLines }, { readResults }] = await Promise.all([import('../suite/main-interrupt.ts'), import('../results/json.ts')]);
  const said = stderrLines(cancelled.why);
  const notRun = (await readResults(folder).catch(() => undefined))?.notRun?.filter((n) => n.run === runId).map((n) => n.testId) ?? [];
  if (notRun.length > 0) sayNotRun(notRun, folder, runId, interruptedBecause(cancelled.why), notRunListedIn(folder), said);
  else said(`no test had been left without a verdict (${interruptedBecause(cancelled.why)})`);
}
