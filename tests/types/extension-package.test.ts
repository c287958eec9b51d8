// An extension from outside the checkout, as a site would write one: docs/examples/subprocess-
// extension (a scheduler, a launcher, an extractor and a test type in one package) is installed
// into a WORK_DIR in a temporary folder, named in its disagg-bench.yaml, and, without a line of the
// project changed, `disagg-bench run` uses its scheduler and launcher for a nixl test, and the
// Vitest entry runs its test type's configs as a project of their own, judged by its verdict from
// its extractor's metric. In-process, a broken entry is one error naming the file.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { loadExtensions } from '../../framework/config/extensions.ts';
import { getExtractor } from '../../framework/metrics/extractors/index.ts';
import { findScheduler } from '../../framework/scheduler/registry.ts';
import { findLauncher } from '../../framework/scheduler/launch/registry.ts';
import { allTestTypeNames } from '../../framework/contract/extension-types.ts';
import { testTypeNames } from '../../framework/contract/names.ts';
import { readOutputs, recordOf, repoRoot, runSuite, testIdOf } from '../fixtures/reliability/suite-run.ts';

const root = mkdtempSync(path.join(tmpdir(), 'extension-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A WORK_DIR with the example installed as a package, a nixl config, and disagg-bench.yaml naming `entries`. */
function workDir(name: string, entries: string[]): string {
  const work = path.join(root, name);
  cpSync(path.join(repoRoot, 'docs/examples/subprocess-extension'), path.join(work, 'node_modules/disagg-bench-subprocess'), { recursive: true });
  mkdirSync(path.join(work, 'test_configs/nixl/perf'), { recursive: true });
  cpSync(path.join(repoRoot, 'test_configs/nixl/perf/cache_engine_shm.yaml'), path.join(work, 'test_configs/nixl/perf/ext.yaml'));
  mkdirSync(path.join(work, 'test_configs/shell-check/perf'), { recursive: true });
  writeFileSync(path.join(work, 'test_configs/shell-check/perf/two.yaml'), 'benchmark:\n  command: [bash, -c, "echo ok; echo no; echo ok"]\n  min_ok: 2\n');
  writeFileSync(path.join(work, 'test_configs/shell-check/perf/short.yaml'), 'benchmark:\n  command: [bash, -c, "echo ok"]\n  min_ok: 3\n');
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

  it('the Vitest entry runs its test type as a project: each config judged by the type\'s verdict from the extractor\'s metric', { timeout: 240_000 }, async () => {
    const work = workDir('vitest', ['disagg-bench-subprocess']);
    const run = await runSuite({ workDir: work, outputPath: path.join(root, 'vitest-out'), scheduler: 'subprocess', project: 'shell-check' });
    expect(run.exitCode, run.output).toBe(1);
    expect(recordOf(run.records, testIdOf('two', 'shell-check'))).toMatchObject({ verdict: 'passed' });
    expect(recordOf(run.records, testIdOf('short', 'shell-check'))).toMatchObject({ verdict: 'failed' });
    expect(run.output).toContain('1 "ok" line(s), fewer than min_ok 3');
    expect(new Set(run.ledger.map((e) => e.scheduler))).toEqual(new Set(['subprocess']));
  });

  it('registers its scheduler, launcher, extractor and test type in this process too, by path as by package name', async () => {
    const work = workDir('in-process', ['./node_modules/disagg-bench-subprocess/index.js']);
    expect(await loadExtensions(work)).toEqual([path.join(work, 'node_modules/disagg-bench-subprocess/index.js')]);
    expect(findScheduler('subprocess')?.launcher).toBe('fork-tasks');
    expect(findLauncher('fork-tasks')?.rankVariables).toBe('torchrun');
    expect(getExtractor('ok-lines')?.('ok\nno\nok\n', { logFile: 'x.log', extractor: 'ok-lines' })).toMatchObject({ metrics: [{ name: 'OK_LINES', value: 2 }] });
    expect(allTestTypeNames()).toEqual([...testTypeNames, 'shell-check']);
  });

  it('a broken entry is one error naming the file and the entry', async () => {
    await expect(loadExtensions(workDir('missing', ['./nowhere.js']))).rejects.toThrow(/disagg-bench\.yaml: extension "\.\/nowhere\.js": \S+nowhere\.js does not exist/);
    await expect(loadExtensions(workDir('unknown', ['no-such-package']))).rejects.toThrow(/extension "no-such-package": no package of that name is installed/);
    const work = workDir('no-register', ['./plain.js']);
    writeFileSync(path.join(work, 'plain.js'), 'export const x = 1;\n');
    await expect(loadExtensions(work)).rejects.toThrow(/extension "\.\/plain\.js" \(\S+plain\.js\) exports no register\(api\) function/);
  });
});
