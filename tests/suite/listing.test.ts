// `vitest list --project <type>` collects the tests and runs none: it checks the settings that
// decide what is listed with the run's one-line errors, but neither checks nor creates OUTPUT_PATH
// (a listing writes nothing there) and announces no run (framework/suite/global-setup.ts).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { HOST_VARIABLES, removeWorkDirs, repoRoot, standinConfig, testIdOf, writeWorkDir } from '../fixtures/reliability/suite-run.ts';

const scratch: string[] = [];
const scratchDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'listing-out-'));
  scratch.push(dir);
  return dir;
};
afterAll(removeWorkDirs);
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

async function list(workDir: string, outputPath: string, env: Record<string, string> = {}) {
  const vars: Record<string, string | undefined> = { ...process.env };
  for (const name of HOST_VARIABLES) delete vars[name];
  Object.assign(vars, { WORK_DIR: workDir, OUTPUT_PATH: outputPath, GPU_TYPE: 'GB200', NO_COLOR: '1', ...env });
  const r = await execa('node', [path.join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'list', '--project', 'disagg'], { cwd: repoRoot, env: vars, extendEnv: false, all: true, reject: false, stdin: 'ignore', timeout: 120_000 });
  return { exitCode: r.exitCode, output: String(r.all ?? '') };
}

describe('vitest list', () => {
  it('lists the configs without checking or creating OUTPUT_PATH, and announces no run', { timeout: 120_000 }, async () => {
    const { workDir } = writeWorkDir({ fine: stringify(await standinConfig({ client: 'ok' })) }, 'listing-');
    const blocker = path.join(scratchDir(), 'a-file');
    writeFileSync(blocker, 'not a folder\n');
    const { exitCode, output } = await list(workDir, path.join(blocker, 'results'));
    expect(exitCode, output).toBe(0);
    expect(output).toContain(`> ${testIdOf('fine')}`);
    expect(output).not.toContain('OUTPUT_PATH');
    expect(output).not.toContain('disagg-bench: scheduler');
    const unmade = scratchDir();
    expect((await list(workDir, path.join(unmade, 'results'))).exitCode).toBe(0);
    expect(existsSync(path.join(unmade, 'results'))).toBe(false);
  });

  it('refuses a setting that decides what is listed in one line, as a run does', { timeout: 120_000 }, async () => {
    const { workDir, outputPath } = writeWorkDir({ fine: stringify(await standinConfig({ client: 'ok' })) }, 'listing-');
    const { exitCode, output } = await list(workDir, outputPath, { SCHEDULER: 'pbs' });
    expect(exitCode).toBe(2);
    expect(output).toMatch(/^disagg-bench: error: SCHEDULER="pbs": expected /m);
    expect(output).not.toMatch(/Unhandled Error|❯|\bat .*\.ts:\d+/);
  });
});
