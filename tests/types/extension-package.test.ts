// An extension from outside the checkout, as a site would write one: docs/examples/subprocess-
// extension (a scheduler, a launcher and an extractor in one package) is installed into a WORK_DIR
// in a temporary folder, named in its disagg-bench.yaml, and `disagg-bench run` uses its scheduler
// and launcher for a nixl test without a line of the project changed. In-process, the same loader
// registers its extractor, and a broken entry is one error naming the file.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { loadExtensions } from '../../framework/config/extensions.ts';
import { getExtractor } from '../../framework/metrics/extractors/index.ts';
import { findScheduler } from '../../framework/scheduler/registry.ts';
import { findLauncher } from '../../framework/scheduler/launch/registry.ts';
import { readOutputs, recordOf, repoRoot, testIdOf } from '../fixtures/reliability/suite-run.ts';

const root = mkdtempSync(path.join(tmpdir(), 'extension-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A WORK_DIR with the example installed as a package, a nixl config, and disagg-bench.yaml naming `entries`. */
function workDir(name: string, entries: string[]): string {
  const work = path.join(root, name);
  cpSync(path.join(repoRoot, 'docs/examples/subprocess-extension'), path.join(work, 'node_modules/disagg-bench-subprocess'), { recursive: true });
  mkdirSync(path.join(work, 'test_configs/nixl/perf'), { recursive: true });
  cpSync(path.join(repoRoot, 'test_configs/nixl/perf/cache_engine_shm.yaml'), path.join(work, 'test_configs/nixl/perf/ext.yaml'));
  writeFileSync(path.join(work, 'disagg-bench.yaml'), `extensions:\n${entries.map((e) => `  - ${e}\n`).join('')}`);
  return work;
}

describe('an extension package outside the checkout', () => {
  it('disagg-bench run takes its scheduler and its launcher: a nixl test of 2 ranks passes on them', { timeout: 240_000 }, async () => {
    const work = workDir('run', ['disagg-bench-subprocess']);
    const outputPath = path.join(root, 'run-out');
    const run = await execa('node', [path.join(repoRoot, 'bin/disagg-bench.js'), 'run', 'nixl', '--scheduler', 'subprocess'], {
      cwd: root, env: { WORK_DIR: work, OUTPUT_PATH: outputPath, GPU_TYPE: 'GB200', NO_COLOR: '1', DISAGG_BIN: 'tsx' }, all: true, reject: false, timeout: 220_000,
    });
    expect(run.exitCode, run.all).toBe(0);
    const latest = path.join(outputPath, 'latest');
    const outputs = readOutputs(latest);
    expect(recordOf(outputs.records, testIdOf('ext', 'nixl'))).toMatchObject({ verdict: 'passed' });
    expect(new Set(outputs.ledger.map((e) => e.scheduler))).toEqual(new Set(['subprocess']));
    // The job script starts its ranks with the extension's launcher, which tells them their rank as torchrun would.
    const script = readFileSync(path.join(latest, 'slurm_logs', testIdOf('ext', 'nixl'), 'job.sh'), 'utf8');
    expect(script).toMatch(/^export XFER_RANK_VARIABLES=torchrun$/m);
    expect(script).toMatch(/node_modules\/disagg-bench-subprocess\/bin\/fork-tasks --tasks 2 /);
  });

  it('registers its scheduler, launcher and extractor in this process too, by path as by package name', async () => {
    const work = workDir('in-process', ['./node_modules/disagg-bench-subprocess/index.js']);
    expect(await loadExtensions(work)).toEqual([path.join(work, 'node_modules/disagg-bench-subprocess/index.js')]);
    expect(findScheduler('subprocess')?.launcher).toBe('fork-tasks');
    expect(findLauncher('fork-tasks')?.rankVariables).toBe('torchrun');
    expect(getExtractor('ok-lines')?.('ok\nno\nok\n', { logFile: 'x.log', extractor: 'ok-lines' })).toMatchObject({ metrics: [{ name: 'OK_LINES', value: 2 }] });
  });

  it('a broken entry is one error naming the file and the entry', async () => {
    await expect(loadExtensions(workDir('missing', ['./nowhere.js']))).rejects.toThrow(/disagg-bench\.yaml: extension "\.\/nowhere\.js": \S+nowhere\.js does not exist/);
    await expect(loadExtensions(workDir('unknown', ['no-such-package']))).rejects.toThrow(/extension "no-such-package": no package of that name is installed/);
    const work = workDir('no-register', ['./plain.js']);
    writeFileSync(path.join(work, 'plain.js'), 'export const x = 1;\n');
    await expect(loadExtensions(work)).rejects.toThrow(/extension "\.\/plain\.js" \(\S+plain\.js\) exports no register\(api\) function/);
  });
});
