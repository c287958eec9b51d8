// A profile's values as the user wrote them: YAML 1.1 reads an unquoted `off` as false, but a
// profile's `regression: off` means the word (`off` is one of the option's values); a word the
// option does not take is refused in the words written. Every problem of the file is a usage error
// of `disagg-bench run` (exit 2), as a bad option is.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadProfile } from '../../framework/run/profile.ts';
import { run } from '../../framework/run/command.ts';
import { SettingsError } from '../../framework/settings.ts';
import { exitCodeFor } from '../../framework/commands/support/exit-code.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const workDir = (text: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'profile-words-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'disagg-bench.yaml'), text);
  return dir;
};

describe('profile values as written', () => {
  it('unquoted off, in block and flow style, is the word off; on and no are refused as written', () => {
    expect(loadProfile(workDir('profiles:\n  a:\n    regression: off\n'), 'a').values.get('regression')).toBe('off');
    expect(loadProfile(workDir('profiles:\n  a: { regression: off, label: x }\n'), 'a').values.get('regression')).toBe('off');
    expect(() => loadProfile(workDir('profiles:\n  a:\n    regression: no\n'), 'a')).toThrow(/disagg-bench\.yaml:3:5 profiles\.a\.regression: "no": expected fail or warn or off/);
    // A switch still takes YAML's booleans.
    expect(loadProfile(workDir('profiles:\n  a:\n    resume: yes\n'), 'a').values.get('resume')).toBe('true');
  });

  it('an unknown key, a typo\'d profile or a bad value stop `disagg-bench run` as a usage error, exit 2', async () => {
    const cases = [
      ['profiles:\n  a:\n    batchsize: 0\n', 'a', /profiles\.a\.batchsize: unknown setting/],
      ['profiles:\n  nightly: { label: x }\n', 'nigthly', /has no profile of that name \(it has nightly\)/],
      ['profiles:\n  a: { run-kind: sometimes }\n', 'a', /profiles\.a\.run-kind: "sometimes": expected/],
    ] as const;
    for (const [text, name, expected] of cases) {
      const saved = process.env.WORK_DIR;
      process.env.WORK_DIR = workDir(text);
      try {
        const thrown = await run(['--profile', name]).then(() => undefined, (e: unknown) => e);
        expect(thrown).toBeInstanceOf(SettingsError);
        expect((thrown as Error).message).toMatch(expected);
        expect(exitCodeFor('run', thrown)).toBe(2);
      } finally {
        if (saved === undefined) delete process.env.WORK_DIR;
        else process.env.WORK_DIR = saved;
      }
    }
  });
});
