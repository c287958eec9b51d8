// A fresh machine is a fresh machine: where the files of the Debian/Ubuntu packages that install
// UCX and libfabric (libucx0, libfabric1 and their -dev/-utils/-bin siblings) do not exist, the
// quick start (`disagg-bench run nixl`, local scheduler) still ends green: the configs on ucx and
// libfabric are skipped with the reason and the package to install, in results.json, the digest
// (summary.json, summary.md) and report.html, `disagg-bench list` says so before the run, and the
// shm config passes. For real, not simulated: the run happens in a mount and PID namespace made by
// scripts/fresh-machine-namespace.sh (as root), where /usr is an overlay with a whiteout for each
// of those files and the loader's cache is rebuilt without them, so a dlopen by soname or by full
// path, the UCX plugin folder and ucx_info/fi_info are all gone. The checks on the run's files are
// scripts/fresh-machine-check.mjs, the ones scripts/fresh-machine.sh (fresh clone, `npm ci`) makes;
// this test reuses the checkout's node_modules so CI checks it at every run. A library that is
// present but broken is skipped by the same probe (runners/xfer/backends/registry.ts), its reason
// carrying the loader's error.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { HOST_VARIABLES, repoRoot, waitUntil } from '../fixtures/reliability/suite-run.ts';
import { workDirWithExamples } from '../nixl/nixl-suite.ts';
import { checkRun } from '../../scripts/fresh-machine-check.mjs';

const scratch = mkdtempSync(path.join(tmpdir(), 'fresh-machine-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The quick start's configs on each backend this test needs: shm (runs), ucx and libfabric (skipped). */
const CONFIGS = ['ct_seed_read_shm', 'sweep_ucx_read_write', 'sweep_libfabric_tcp_2nodes'];

/** What runs in the namespace: the premise probed with the product's own koffi, then `list` and the quick start. */
const INSIDE = `
node -e "const k=require('koffi');for(const n of process.argv.slice(1)){try{k.load(n);console.log(n+' loaded')}catch{console.log(n+' cannot be loaded')}}" \\
  libucp.so.0 libfabric.so.1 /usr/lib/x86_64-linux-gnu/libucp.so.0 /usr/lib/x86_64-linux-gnu/libfabric.so.1 > "$SCRATCH/premise.txt"
for f in /usr/lib/x86_64-linux-gnu/ucx /usr/bin/ucx_info /usr/bin/fi_info; do [ -e "$f" ] && echo "$f exists"; done >> "$SCRATCH/premise.txt"
node bin/disagg-bench.js list --type nixl > "$SCRATCH/list.txt"
node bin/disagg-bench.js run nixl
`;

/** Processes working in the scratch folder (the run's ranks and jobs do): none may outlive the namespace. */
/** A process's command line, words joined by spaces ('' once it is gone). */
function commandOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

function processesIn(folder: string): string[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readlinkSync(`/proc/${p}/cwd`).startsWith(folder);
      } catch {
        return false;
      }
    });
}

describe('a machine without UCX and libfabric, for real (a mount namespace where their files do not exist)', () => {
  it('runs the quick start green: ucx and libfabric configs skipped naming libucx0 and libfabric1, the shm config passed', { timeout: 420_000 }, async () => {
    const workDir = workDirWithExamples(scratch, CONFIGS);
    const outputPath = path.join(scratch, 'out');
    writeFileSync(path.join(scratch, 'inside.sh'), INSIDE);

    const env: Record<string, string | undefined> = { ...process.env };
    for (const name of [...HOST_VARIABLES, 'GPU_TYPE', 'LD_LIBRARY_PATH', 'LD_PRELOAD']) delete env[name];
    for (const name of Object.keys(env)) if (name.startsWith('XFER_LIB_') || name.startsWith('UCX_') || name.startsWith('FI_')) delete env[name];
    Object.assign(env, { SCRATCH: scratch, WORK_DIR: workDir, OUTPUT_PATH: outputPath, SCHEDULER: 'local', NO_COLOR: '1', DISAGG_HISTORY: 'off', DISAGG_POLL_MAX_SEC: '1' });
    const run = await execa(path.join(repoRoot, 'scripts/fresh-machine-namespace.sh'), ['bash', path.join(scratch, 'inside.sh')], {
      cwd: repoRoot, env, extendEnv: false, all: true, reject: false, stdin: 'ignore', timeout: 360_000,
    });
    const output = String(run.all ?? '');

    // The premise: the namespace was made, and in it neither library loads, by soname or by path.
    expect(output).toMatch(/^fresh-machine-namespace: packages absent: .*libucx0.*libfabric1/m);
    expect(readFileSync(path.join(scratch, 'premise.txt'), 'utf8').trim().split('\n')).toEqual([
      'libucp.so.0 cannot be loaded', 'libfabric.so.1 cannot be loaded',
      '/usr/lib/x86_64-linux-gnu/libucp.so.0 cannot be loaded', '/usr/lib/x86_64-linux-gnu/libfabric.so.1 cannot be loaded',
    ]);
    // Outside it, nothing changed: the namespace's mounts went with it, its processes too.
    expect(execFileSync('findmnt', ['-rn', '-o', 'TARGET,SOURCE'], { encoding: 'utf8' })).not.toMatch(/fresh-machine/);
    expect(processesIn(scratch)).toEqual([]);

    expect(run.exitCode, output).toBe(0);
    const runDir = path.join(outputPath, 'latest');
    const checks = checkRun(runDir, path.join(workDir, 'test_configs/nixl'));
    expect(checks.filter((c) => !c.ok).map((c) => c.what)).toEqual([]);
    expect(checks.length).toBeGreaterThanOrEqual(11);
    const records = (JSON.parse(readFileSync(path.join(runDir, 'results.json'), 'utf8')) as { records: { testId: string; verdict: string; skipReason?: string | null }[] }).records;
    expect(records.find((r) => r.testId === 'nixl_perf_ct_seed_read_shm')?.verdict).toBe('passed');
    expect(records.find((r) => r.testId === 'nixl_perf_sweep_ucx_read_write')?.skipReason).toMatch(/^backend ucx needs UCX \(libucp\.so\.0\), which cannot be loaded on this machine \(.*No such file.*\); install the Debian\/Ubuntu package libucx0 \(apt-get install libucx0\)$/);

    // The digest at the run's end, and `list` before it, in the same words.
    const tail = output.trimEnd().split('\n').slice(-25).join('\n');
    expect(tail).toMatch(/^skipped: nixl_perf_sweep_ucx_read_write: backend ucx needs UCX .*libucx0/m);
    expect(tail).toMatch(/^skipped: nixl_perf_sweep_libfabric_tcp_2nodes: backend libfabric needs .*libfabric1/m);
    expect(tail).toMatch(/^3 test\(s\): 1 passed, 0 failed, 2 skipped/m);
    const list = readFileSync(path.join(scratch, 'list.txt'), 'utf8');
    expect(list).toMatch(/^nixl_perf_ct_seed_read_shm\tWAITING$/m);
    expect(list).toMatch(/^nixl_perf_sweep_ucx_read_write\tSKIPPED: backend ucx needs UCX .*\(apt-get install libucx0\)$/m);
    expect(list).toMatch(/^nixl_perf_sweep_libfabric_tcp_2nodes\tSKIPPED: backend libfabric needs .*\(apt-get install libfabric1\)$/m);
  });

  it('a SIGTERM to the namespace reaches the command, and ends every process in it; no mount is left', { timeout: 180_000 }, async () => {
    const folder = mkdtempSync(path.join(scratch, 'signal-'));
    const ready = path.join(folder, 'ready');
    // The command records the signal it got; a process it left behind (the sleep) must end with the
    // namespace. Ready: the one process working in the folder is the sleep (not its shell before
    // the `exec`, nor a `touch` still exiting).
    const command = `trap 'echo TERM > ${folder}/got; exit 7' TERM; (cd ${folder} && touch ${ready} && exec sleep 1000) & wait`;
    const run = execa(path.join(repoRoot, 'scripts/fresh-machine-namespace.sh'), ['bash', '-c', command], { reject: false, all: true, stdin: 'ignore', timeout: 150_000 });
    const onlyTheSleep = () => {
      const pids = processesIn(folder);
      return existsSync(ready) && pids.length === 1 && commandOf(pids[0]) === 'sleep 1000';
    };
    await waitUntil('the sleep to run in the namespace, alone in its folder', onlyTheSleep, 120_000);
    run.kill('SIGTERM');
    const ended = await run;
    expect(ended.exitCode, String(ended.all)).toBe(7);
    expect(readFileSync(path.join(folder, 'got'), 'utf8').trim()).toBe('TERM');
    expect(processesIn(folder)).toEqual([]);
    expect(execFileSync('findmnt', ['-rn', '-o', 'TARGET,SOURCE'], { encoding: 'utf8' })).not.toMatch(/fresh-machine/);
  });
});
