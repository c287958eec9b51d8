// Where each setting of a run comes from: the command line, then the environment, then the profile,
// then the default. What the command line or the profile decides is written into the variables the
// framework reads (options.ts), so the environment a run sees is the one answer; what they leave
// alone stays as the environment had it.
import { RUN_OPTIONS, type RunOption } from './options.ts';
import type { Profile } from './profile.ts';

/** What the command line gave: values by option name (a switch: 'true'), list options' values. */
export interface CommandLineSettings {
  values: Map<string, string>;
  lists: Map<string, string[]>;
}

export interface SettingSource {
  /** The option's name, or the variable for settings only the environment sets. */
  setting: string;
  value: string;
  from: string;
}

export interface ResolvedRun {
  /** Variables to set for the run (their final values). */
  env: Record<string, string>;
  testNamePattern?: string;
  tagsFilter?: string[];
  /** Every setting that is not its default, with where it came from, in the table's order. */
  sources: SettingSource[];
}

/**
 * Variables the framework reads that have no option: set in the environment, they are shown with
 * the rest (they change what the run does, and a CI log should say so).
 */
const ENV_ONLY = [
  'WORK_DIR', 'DISAGG_HISTORY', 'DISAGG_REGRESSION_THRESHOLD', 'DISAGG_QUEUE_ALLOWANCE_SEC', 'DISAGG_POLL_MAX_SEC',
  'DISAGG_CSV_EXTRA_ROWS', 'DISAGG_PROGRESS', 'DEBUG_JOB_ID', 'DISAGG_TEST_WORKERS',
];

function envValue(option: RunOption, value: string): string {
  return option.kind === 'switch' ? (value === 'true' ? option.envOn! : '0') : value;
}

export function resolveRun(commandLine: CommandLineSettings, env: NodeJS.ProcessEnv, profile: Profile | undefined): ResolvedRun {
  const resolved: ResolvedRun = { env: {}, sources: [] };
  const fromProfile = profile ? `profile ${profile.name} in ${profile.file}` : '';
  for (const option of RUN_OPTIONS) {
    if (option.kind === 'list') {
      const given = commandLine.lists.get(option.name);
      const values = given ?? profile?.lists.get(option.name);
      if (!values || values.length === 0) continue;
      resolved.tagsFilter = values;
      resolved.sources.push({ setting: option.name, value: values.join(' '), from: given ? 'command line' : fromProfile });
      continue;
    }
    const given = commandLine.values.get(option.name);
    const inEnv = option.env !== undefined && env[option.env] !== undefined && env[option.env] !== '';
    const chosen: [string, string] | undefined =
      given !== undefined ? [given, 'command line']
      : inEnv ? [env[option.env!]!, `environment ${option.env}`]
      : profile?.values.has(option.name) ? [profile.values.get(option.name)!, fromProfile]
      : undefined;
    if (!chosen) continue;
    const [value, from] = chosen;
    if (option.vitest === 'testNamePattern') resolved.testNamePattern = value;
    else if (!inEnv || given !== undefined) resolved.env[option.env!] = envValue(option, value);
    resolved.sources.push({ setting: option.name, value: option.kind === 'switch' && !inEnv ? 'on' : value, from });
  }
  for (const name of ENV_ONLY) {
    const value = env[name];
    if (value !== undefined && value !== '') resolved.sources.push({ setting: name, value, from: 'environment' });
  }
  return resolved;
}

/** The lines a run prints once at its start: each setting that is not a default, and where it came from. */
export function describeSources(sources: readonly SettingSource[]): string[] {
  if (sources.length === 0) return ['disagg-bench run: every setting is its default'];
  const width = sources.reduce((w, s) => Math.max(w, s.setting.length), 0);
  return ['disagg-bench run: settings that are not their default:', ...sources.map((s) => `  ${s.setting.padEnd(width)}  ${s.value}  (${s.from})`)];
}

/**
 * A message about a setting, in the words the user gave it: `GPU_TYPE="x"` becomes `--gpu-type "x"`
 * when the command line set it, `gpu-type (profile P in FILE) "x"` when a profile did.
 */
export function inUsersWords(message: string, sources: readonly SettingSource[]): string {
  let out = message;
  for (const source of sources) {
    const option = RUN_OPTIONS.find((o) => o.name === source.setting);
    if (!option?.env || source.from.startsWith('environment')) continue;
    const words = source.from === 'command line' ? `--${option.name} ` : `${option.name} (${source.from}) `;
    out = out.replaceAll(`set ${option.env}=`, `use ${words}`).replaceAll(`${option.env}=`, words);
  }
  return out;
}
