// `disagg-bench run`'s settings: the command line, then the environment, then a profile (a real
// disagg-bench.yaml in a scratch WORK_DIR), then the default; what is printed at the run's start;
// a profile refused with file:line:col for every unknown key or bad value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfile, ProfileError, PROFILE_FILE } from '../../framework/run/profile.ts';
import { describeSources, resolveRun, type CommandLineSettings } from '../../framework/run/resolve.ts';
import { RUN_OPTIONS, runOption } from '../../framework/run/options.ts';
import { RUN_KINDS } from '../../framework/settings.ts';
import { schedulerNames } from '../../framework/scheduler/registry.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function workDir(yaml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'run-profile-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, PROFILE_FILE), yaml);
  return dir;
}

const cli = (values: Record<string, string> = {}, lists: Record<string, string[]> = {}): CommandLineSettings => ({
  values: new Map(Object.entries(values)),
  lists: new Map(Object.entries(lists)),
});

const NIGHTLY = `profiles:
  nightly:
    batch-size: 0
    scheduler: local
    label: nightly-run
    resume: true
    tags: [perf, accuracy]
  smoke:
    test-list: testlist/smoke.txt
    test-name: smoke_
`;

describe('precedence: command line, environment, profile, default', () => {
  const profile = loadProfile(workDir(NIGHTLY), 'nightly');

  it('a profile sets the variables the framework reads; the rest stay defaults and are not shown', () => {
    const run = resolveRun(cli(), {}, profile);
    expect(run.env).toEqual({ DISAGG_BATCH_SIZE: '0', SCHEDULER: 'local', DISAGG_RUN_LABEL: 'nightly-run', RESUME: '1' });
    expect(run.tagsFilter).toEqual(['perf', 'accuracy']);
    expect(run.sources.map((s) => s.setting)).toEqual(['tags', 'batch-size', 'scheduler', 'resume', 'label']);
    expect(run.sources.every((s) => s.from.startsWith(`profile nightly in ${profile.file}`))).toBe(true);
  });

  it('the environment beats the profile and is left as it is; the command line beats both', () => {
    const env = { DISAGG_BATCH_SIZE: '3', SCHEDULER: 'slurm', RESUME: '0' };
    const run = resolveRun(cli({ scheduler: 'local' }, { tags: ['stress'] }), env, profile);
    // The variable the environment already holds is not rewritten; the command line's is.
    expect(run.env).toEqual({ SCHEDULER: 'local', DISAGG_RUN_LABEL: 'nightly-run' });
    expect(run.tagsFilter).toEqual(['stress']);
    const from = Object.fromEntries(run.sources.map((s) => [s.setting, `${s.value} <- ${s.from}`]));
    expect(from).toMatchObject({
      'batch-size': '3 <- environment DISAGG_BATCH_SIZE',
      scheduler: 'local <- command line',
      resume: '0 <- environment RESUME',
      tags: 'stress <- command line',
    });
  });

  it('switches on the command line set their variable; -t goes to Vitest, not the environment', () => {
    const run = resolveRun(cli({ replay: 'true', 'test-name': 'kv_' }), {}, undefined);
    expect(run.env).toEqual({ DEBUG_MODE: '1' });
    expect(run.testNamePattern).toBe('kv_');
  });

  it('prints each setting that is not a default once, with its source; variables without an option too', () => {
    const run = resolveRun(cli({ 'batch-size': '2' }), { WORK_DIR: '/w', DISAGG_HISTORY: 'off' }, undefined);
    const lines = describeSources(run.sources);
    expect(lines[0]).toBe('disagg-bench run: settings that are not their default:');
    expect(lines.slice(1).map((l) => l.trim().replace(/\s+/g, ' '))).toEqual([
      'batch-size 2 (command line)',
      'WORK_DIR /w (environment)',
      'DISAGG_HISTORY off (environment)',
    ]);
    expect(describeSources(resolveRun(cli(), {}, undefined).sources)).toEqual(['disagg-bench run: every setting is its default']);
  });
});

describe('every option of disagg-bench run', () => {
  // One value each option takes; the walk fails for an option added without one.
  const sample: Record<string, string> = {
    'test-name': 'kv_', tags: 'perf', 'test-list': 'testlist/a.txt', 'batch-size': '7', scheduler: 'local', output: '/tmp/out',
    replay: 'true', resume: 'true', label: 'nightly', 'run-kind': 'pre-merge', regression: 'fail', 'gpu-type': 'H200',
    'gate-metrics': 'all,-SERVER_MEDIAN_TTFT', branch: 'feature-x', 'baseline-branch': 'release',
  };

  it.each(RUN_OPTIONS.map((o) => o.name))('--%s changes what the run does, and is printed with its source', (name) => {
    const option = RUN_OPTIONS.find((o) => o.name === name)!;
    expect(sample[name], `a sample value for --${name}`).toBeDefined();
    const given = option.kind === 'list' ? cli({}, { [name]: [sample[name]] }) : cli({ [name]: sample[name] });
    const run = resolveRun(given, {}, undefined);
    if (option.env) expect(run.env[option.env]).toBe(option.kind === 'switch' ? option.envOn : sample[name]);
    else expect(option.vitest === 'tagsFilter' ? run.tagsFilter : run.testNamePattern).toEqual(option.kind === 'list' ? [sample[name]] : sample[name]);
    expect(run.sources).toEqual([{ setting: name, value: option.kind === 'switch' ? 'on' : sample[name], from: 'command line' }]);
    // The same value from a profile: the same effect, its source named.
    const profile = { name: 'p', file: '/w/disagg-bench.yaml', values: new Map(option.kind === 'list' ? [] : [[name, option.kind === 'switch' ? 'true' : sample[name]]]), lists: new Map(option.kind === 'list' ? [[name, [sample[name]]]] : []) };
    const fromProfile = resolveRun(cli(), {}, profile);
    expect(fromProfile.env).toEqual(run.env);
    expect(fromProfile.sources[0].from).toBe('profile p in /w/disagg-bench.yaml');
  });

  it('a value an option cannot take is refused with what it expects', () => {
    expect(runOption('scheduler')!.check!('pbs')).toBe(`expected ${schedulerNames().join(' or ')}`);
    for (const name of schedulerNames()) expect(runOption('scheduler')!.check!(name), name).toBeUndefined();
    expect(runOption('run-kind')!.check!('nightly')).toBe(`expected ${RUN_KINDS.join(' or ')}`);
    expect(runOption('regression')!.check!('loud')).toBe('expected fail or warn or off');
    expect(runOption('batch-size')!.check!('1e3')).toMatch(/expected a whole number/);
    expect(runOption('batch-size')!.check!('1_000')).toBeUndefined();
  });
});

describe('profiles: validated like configs', () => {
  it('an unknown key, a bad value and a switch that is not true/false: each named with file:line:col', () => {
    const dir = workDir(`profiles:
  nightly:
    batch-size: lots
    schedular: local
    resume: yes please
  smoke: 3
`);
    const error = (() => {
      try {
        loadProfile(dir, 'nightly');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(ProfileError);
    const file = path.join(dir, PROFILE_FILE);
    expect(error!.message.split('\n')).toEqual([
      `${file}:3:5 profiles.nightly.batch-size: "lots": expected a whole number of jobs per batch (0 = all at once)`,
      expect.stringMatching(new RegExp(`^${file}:4:5 profiles.nightly.schedular: unknown setting; expected one of test-name, tags, `)),
      `${file}:5:5 profiles.nightly.resume: expected true or false`,
      `${file}:6:3 profiles.smoke: expected a mapping of settings (the long names of \`disagg-bench run\` options)`,
    ]);
  });

  it('a key beside `profiles:` is refused; a profile that is not there is named with those that are', () => {
    const file = path.join(workDir('profile:\n  nightly: {}\n'), PROFILE_FILE);
    expect(() => loadProfile(path.dirname(file), 'nightly')).toThrow(`${file}:1:1 profile: unknown key; expected \`profiles:\``);
    expect(() => loadProfile(workDir(NIGHTLY), 'weekly')).toThrow(/--profile weekly: .*disagg-bench.yaml has no profile of that name \(it has nightly, smoke\)/);
  });

  it('no disagg-bench.yaml in WORK_DIR: --profile says where it looked', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'run-profile-'));
    dirs.push(dir);
    expect(() => loadProfile(dir, 'nightly')).toThrow(`--profile nightly: ${path.join(dir, PROFILE_FILE)} does not exist`);
  });

  it('a YAML mistake (a duplicate key) is the loader\'s located error', () => {
    const dir = workDir('profiles:\n  a: {scheduler: local}\n  a: {scheduler: slurm}\n');
    expect(() => loadProfile(dir, 'a')).toThrow(new RegExp(`${path.join(dir, PROFILE_FILE).replace(/[.]/g, '\\.')}:3:3 `));
  });
});
