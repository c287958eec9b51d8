// A benchmark's --help prints its usage and exits 0 before anything is measured; an option it does
// not have, or a value it cannot use, is one line and the usage, exit 2 (bench/lib/options.ts),
// never node's stack trace. A few scripts, run; tests/bench/command-lines.test.ts holds every
// script under bench/ to reading its command line that way.
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const bench = (script: string, args: string[]) => execa('node', ['--import', 'tsx', `bench/${script}.ts`, ...args], { cwd: repoRoot, reject: false, timeout: 60_000 });

describe.each(['history', 'startup', 'orchestration'])('bench/%s.ts', (script) => {
  it('--help and -h: its usage, exit 0', { timeout: 120_000 }, async () => {
    for (const flag of ['--help', '-h']) {
      const r = await bench(script, [flag]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: node --import tsx bench/${script}\\.ts \\[`));
      expect(r.stderr).toBe('');
    }
  });

  it('an option it does not have: one line and the usage, exit 2', { timeout: 120_000 }, async () => {
    const r = await bench(script, ['--bogus']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^Unknown option '--bogus'[^\\n]*\\nusage: node --import tsx bench/${script}\\.ts `));
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('bench/orchestration.ts: a value it cannot use', () => {
  it.each([
    [['--order', 'bogus'], "--order 'bogus': expected baseline-first or framework-first"],
    [['--jobs', 'abc'], "--jobs 'abc': expected a whole number of at least 1"],
    [['--jobs=-3'], "--jobs '-3': expected a whole number of at least 1"],
    [['--poll', '0'], "--poll '0': expected a number greater than 0"],
  ])('%j: one line naming it and what was expected, the usage, exit 2', { timeout: 120_000 }, async (args, line) => {
    const r = await bench('orchestration', args);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(line);
    expect(r.stderr).toMatch(/^[^\n]*\nusage: node --import tsx bench\/orchestration\.ts /);
    expect(r.stdout).toBe('');
  });
});
