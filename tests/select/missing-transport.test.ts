// A fresh machine is a fresh machine: with UCX and libfabric unloadable (an empty libucp.so.0,
// libucp.so, libfabric.so.1 and libfabric.so first on LD_LIBRARY_PATH, so the dynamic loader finds
// them and refuses them: "file too short"), the quick-start command still ends green: the configs
// on ucx and libfabric are skipped with the reason and the Debian/Ubuntu package that provides
// the library, in results.json, the run digest and report.html; the shm config runs.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runSuite } from '../fixtures/reliability/suite-run.ts';

const examples = path.join(repoRoot, 'test_configs/nixl/perf');
const scratch = mkdtempSync(path.join(tmpdir(), 'missing-transport-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const unloadable = path.join(scratch, 'no-transports');
mkdirSync(unloadable);
for (const soname of ['libucp.so.0', 'libucp.so', 'libucs.so.0', 'libucs.so', 'libfabric.so.1', 'libfabric.so']) writeFileSync(path.join(unloadable, soname), '');

describe('a config whose transport library is missing', () => {
  it('the stand-in libraries really cannot be loaded (the premise of the test)', () => {
    const probe = `const k=require('koffi');for(const n of ['libucp.so.0','libfabric.so.1']){try{k.load(n);console.log(n+' loaded')}catch{console.log(n+' refused')}}`;
    const out = execFileSync(process.execPath, ['-e', probe], { cwd: repoRoot, env: { ...process.env, LD_LIBRARY_PATH: unloadable }, encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(['libucp.so.0 refused', 'libfabric.so.1 refused']);
  });

  it('is skipped with the reason and its package; the run ends green', { timeout: 400_000 }, async () => {
    const workDir = path.join(scratch, 'work');
    const outputPath = path.join(scratch, 'out');
    const configDir = path.join(workDir, 'test_configs/nixl/perf');
    mkdirSync(configDir, { recursive: true });
    cpSync(path.join(examples, 'matrices'), path.join(configDir, 'matrices'), { recursive: true });
    for (const name of ['ct_seed_read_shm', 'sweep_ucx_read_write', 'sweep_libfabric_tcp_2nodes']) cpSync(path.join(examples, `${name}.yaml`), path.join(configDir, `${name}.yaml`));
    const run = await runSuite({ workDir, outputPath, scheduler: 'local', project: 'nixl', env: { GPU_TYPE: undefined, LD_LIBRARY_PATH: unloadable, DISAGG_HISTORY: 'off' }, timeoutMs: 300_000 });
    expect(run.exitCode, run.output).toBe(0);

    const byId = new Map(run.records.map((r) => [r.testId, r]));
    expect(byId.get('nixl_perf_ct_seed_read_shm')?.verdict).toBe('passed');
    const ucx = byId.get('nixl_perf_sweep_ucx_read_write')!;
    expect(ucx).toMatchObject({ verdict: 'skipped', jobId: null });
    expect(ucx.skipReason).toMatch(/^backend ucx needs UCX \(libucp\.so\.0\), which cannot be loaded on this machine \(.*file too short.*\); install the Debian\/Ubuntu package libucx0 \(apt-get install libucx0\)$/);
    const fabric = byId.get('nixl_perf_sweep_libfabric_tcp_2nodes')!;
    expect(fabric.verdict).toBe('skipped');
    expect(fabric.skipReason).toMatch(/backend libfabric needs libfabric \(libfabric\.so\.1\).*install the Debian\/Ubuntu package libfabric1/);

    const tail = run.output.trimEnd().split('\n').slice(-25).join('\n');
    expect(tail).toMatch(/^skipped: nixl_perf_sweep_ucx_read_write: backend ucx needs UCX .*libucx0/m);
    expect(tail).toMatch(/^skipped: nixl_perf_sweep_libfabric_tcp_2nodes: backend libfabric needs .*libfabric1/m);
    expect(tail).toMatch(/^3 test\(s\): 1 passed, 0 failed, 2 skipped/m);
    const report = readFileSync(path.join(outputPath, 'report.html'), 'utf8');
    expect(report).toContain('apt-get install libucx0');
    expect(report).toContain('apt-get install libfabric1');
  });
});
