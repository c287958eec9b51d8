// Profiles: named sets of run settings in WORK_DIR/disagg-bench.yaml, so a nightly job is
// `disagg-bench run --profile nightly` instead of a wrapper script of variables:
//
//   profiles:
//     nightly:   { batch-size: 0, run-kind: post-merge, regression: fail, tags: [perf] }
//     smoke:     { test-list: testlist/smoke.txt, scheduler: local }
//
// A profile's keys are the long names of `disagg-bench run`'s options (options.ts). The file is read
// like a config (framework/config/load.ts: positions, duplicate keys, size limit); every problem is
// one `file:line:col key: message` line, and an unknown key is refused, never ignored.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readYamlFileSync } from '../config/load.ts';
import { formatIssue, formatKeyPath, type ConfigIssue } from '../config/issue.ts';
import type { KeyPath } from '../contract/test-type.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import { RUN_OPTIONS, runOption } from './options.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export const PROFILE_FILE = 'disagg-bench.yaml';

export class ProfileError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'ProfileError';
  constructor(message: string, file: string) {
    super(message, { file });
  }
}

/** One profile's settings, by option name; a list option's values are joined in `lists`. */
export interface Profile {
  name: string;
  file: string;
  values: Map<string, string>;
  lists: Map<string, string[]>;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const scalar = (v: unknown): v is string | number | boolean => ['string', 'number', 'boolean'].includes(typeof v);

/** The plain word written after the key at `at` (`regression: off` -> off), or undefined. */
function wordAfterKey(text: string, at: { line?: number; col?: number } | undefined): string | undefined {
  if (!at?.line || !at.col) return undefined;
  const line = text.split(/\r?\n/)[at.line - 1] ?? '';
  const match = /^[^:]*:\s*([^\s,}\]#'"]+)/.exec(line.slice(at.col - 1));
  return match?.[1];
}

/** The profile `name` of WORK_DIR's disagg-bench.yaml; a ProfileError naming every problem of the file or the name. */
export function loadProfile(workDir: string, name: string): Profile {
  const file = path.join(workDir, PROFILE_FILE);
  if (!existsSync(file)) throw new ProfileError(`--profile ${name}: ${file} does not exist; profiles are named under \`profiles:\` in WORK_DIR/${PROFILE_FILE}`, file);
  const parsed = readYamlFileSync(file, file);
  const text = parsed.issues.length === 0 ? readFileSync(file, 'utf8') : '';
  const issues: ConfigIssue[] = [...parsed.issues];
  const at = (keyPath: KeyPath, message: string) => {
    const pos = parsed.locate(keyPath);
    issues.push({ file, line: pos?.line, col: pos?.col, path: formatKeyPath(keyPath), message });
  };
  const data = parsed.data;
  let profiles: Record<string, unknown> = {};
  if (issues.length === 0) {
    if (!isMap(data)) at([], 'expected a mapping with one key, `profiles:`');
    else {
      // `extensions:` is read by framework/config/extensions.ts.
      for (const key of Object.keys(data)) if (key !== 'profiles' && key !== 'extensions') at([key], 'unknown key; expected `profiles:` (a mapping of profile names to settings) or `extensions:`');
      if (data.profiles === undefined && 'extensions' in data) profiles = {};
      else if (!isMap(data.profiles)) at(['profiles'], 'expected a mapping of profile names to settings');
      else profiles = data.profiles;
    }
  }
  // Every profile is checked, not only the one asked for: a mistake in `smoke` is found by the nightly run too.
  const checked = new Map<string, Profile>();
  for (const [profileName, settings] of Object.entries(profiles)) {
    const profile: Profile = { name: profileName, file, values: new Map(), lists: new Map() };
    checked.set(profileName, profile);
    if (!isMap(settings)) {
      at(['profiles', profileName], 'expected a mapping of settings (the long names of `disagg-bench run` options)');
      continue;
    }
    for (const [key, value] of Object.entries(settings)) {
      const where: KeyPath = ['profiles', profileName, key];
      const option = runOption(key);
      if (!option) {
        at(where, `unknown setting; expected one of ${RUN_OPTIONS.map((o) => o.name).join(', ')}`);
        continue;
      }
      if (option.kind === 'switch') {
        if (typeof value !== 'boolean') at(where, 'expected true or false');
        else if (value) profile.values.set(key, 'true');
        continue;
      }
      if (option.kind === 'list') {
        const items = Array.isArray(value) ? value : [value];
        if (!items.every(scalar)) at(where, 'expected a value or a list of values');
        else profile.lists.set(key, items.map(String));
        continue;
      }
      if (!scalar(value)) {
        at(where, `expected one value (${option.arg})`);
        continue;
      }
      // YAML 1.1 reads an unquoted off/on/yes/no as a boolean; the project's own files mean the word.
      const written = typeof value === 'boolean' ? wordAfterKey(text, parsed.locate(where)) : undefined;
      const given = written ?? String(value);
      const problem = option.check?.(given);
      if (problem) at(where, `${JSON.stringify(given)}: ${problem}`);
      else profile.values.set(key, given);
    }
  }
  if (issues.length > 0) throw new ProfileError(issues.map(formatIssue).join('\n'), file);
  const profile = checked.get(name);
  if (!profile) {
    const names = [...checked.keys()];
    throw new ProfileError(`--profile ${name}: ${file} has no profile of that name (${names.length ? `it has ${names.join(', ')}` : 'it names none'})`, file);
  }
  return profile;
}
