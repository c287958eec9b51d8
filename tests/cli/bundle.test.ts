// bin/disagg-bench.js runs the CLI from the esbuild bundle (scripts/build-cli.mjs) while it matches
// the sources, rebuilds it when a source changed, and falls back to tsx when it cannot be built.
// All of it in a temporary copy of the package (sources copied, node_modules linked entry by
// entry), so edits and the copy's own bundle cache never touch the real tree. Every command whose
// modules find files from import.meta.url runs through the bundle and must find the copy's files.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

const realRoot = path.resolve(import.meta.dirname, '../..');
const copy = mkdtempSync(path.join(tmpdir(), 'cli-bundle-'));
for (const entry of ['bin', 'scripts', 'framework', 'runners', 'test_configs', 'testlist', 'package.json', 'tsconfig.json']) {
  cpSync(path.join(realRoot, entry), path.join(copy, entry), { recursive: true });
}
mkdirSync(path.join(copy, 'node_modules'));
for (const entry of readdirSync(path.join(realRoot, 'node_modules'))) {
  if (entry !== '.cache') symlinkSync(path.join(realRoot, 'node_modules', entry), path.join(copy, 'node_modules', entry));
}
const cacheDir = path.join(copy, 'node_modules/.cache/disagg-bench/cli');

afterAll(() => rmSync(copy, { recursive: true, force: true }));

async function bin(args: string[], env: Record<string, string> = {}) {
  const r = await execa('node', [path.join(copy, 'bin/disagg-bench.js'), ...args], {
    cwd: copy,
    reject: false,
    env: { DISAGG_DEBUG_BIN: '1', XFER_TIMEOUT_S: '60', ...env },
    timeout: 90_000,
  });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const built = /^bin: built the CLI bundle/m;
const ranFromCopysBundle = new RegExp(`^(\\[rank \\d+\\] )?bin: bundle ${cacheDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/b-[^/]+/cli\\.js$`, 'm');

describe('CLI bundle', () => {
  it('is built on first use into the copy, then reused while the sources are unchanged', async () => {
    const first = await bin(['help']);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(built);
    expect(first.stderr).toMatch(ranFromCopysBundle);
    expect(first.stdout).toMatch(/^usage: disagg-bench <command>/);
    const pointer = JSON.parse(readFileSync(path.join(cacheDir, 'current.json'), 'utf8')) as { inputs: Record<string, unknown> };
    expect(Object.keys(pointer.inputs)).toContain('framework/cli.ts');
    expect(Object.keys(pointer.inputs)).toContain('runners/xfer/store/client.ts');

    const second = await bin(['help']);
    expect(second.stderr).not.toMatch(built);
    expect(second.stderr).toMatch(ranFromCopysBundle);
    expect(second.stdout).toBe(first.stdout);
  });

  it('never runs stale code: an edited source is rebuilt before it runs', async () => {
    const cli = path.join(copy, 'framework/cli.ts');
    writeFileSync(cli, readFileSync(cli, 'utf8').replace("'usage: disagg-bench <command> [options]'", "'usage (edited): disagg-bench <command> [options]'"));
    const edited = await bin(['help']);
    expect(edited.stderr).toMatch(built);
    expect(edited.stdout).toMatch(/^usage \(edited\): disagg-bench/);

    // Touched only (older mtime, same content): still counts as a change.
    const client = path.join(copy, 'runners/xfer/store/client.ts');
    utimesSync(client, new Date(2001, 0, 1), new Date(2001, 0, 1));
    expect((await bin(['help'])).stderr).toMatch(built);
    expect((await bin(['help'])).stderr).not.toMatch(built);
  });

  it('runs through tsx when asked (DISAGG_BIN=tsx) or when no bundle can be built', async () => {
    const viaTsx = await bin(['help'], { DISAGG_BIN: 'tsx' });
    expect(viaTsx.stderr).toMatch(/^bin: tsx$/m);
    expect(viaTsx.stdout).toMatch(/^usage \(edited\): disagg-bench/);

    // The cache folder's parent is a file: nothing can be built there.
    const cache = path.join(copy, 'node_modules/.cache');
    renameSync(cache, `${cache}.aside`);
    writeFileSync(cache, 'not a folder');
    utimesSync(path.join(copy, 'framework/cli.ts'), new Date(), new Date());
    try {
      const unbuildable = await bin(['help']);
      expect(unbuildable.code).toBe(0);
      expect(unbuildable.stderr).toMatch(/^bin: no bundle \(cannot build the CLI bundle of .*\)$/m);
      expect(unbuildable.stderr).toMatch(/^bin: tsx$/m);
      expect(unbuildable.stdout).toMatch(/^usage \(edited\): disagg-bench/);
    } finally {
      rmSync(cache);
      renameSync(`${cache}.aside`, cache);
    }
  });

  it('list and validate read the copy\'s test_configs (packageRoot, job-prelude.sh) and print what tsx prints', async () => {
    for (const command of ['list', 'validate']) {
      const bundled = await bin([command]);
      expect(bundled.stderr).toMatch(ranFromCopysBundle);
      const viaTsx = await bin([command], { DISAGG_BIN: 'tsx' });
      expect(bundled.code).toBe(viaTsx.code);
      expect(bundled.stdout).toBe(viaTsx.stdout);
      expect(bundled.stdout.length).toBeGreaterThan(0);
    }
    // A config only the copy has shows up: packageRoot is the copy, not the real tree.
    const configs = path.join(copy, 'test_configs');
    const type = readdirSync(configs).find((d) => !d.includes('.'))!;
    expect((await bin(['validate'])).stdout).toMatch(/(\d+) config\(s\)/);
    const before = Number(/(\d+) config\(s\)/.exec((await bin(['validate'])).stdout)![1]);
    mkdirSync(path.join(configs, type, 'perf'), { recursive: true });
    writeFileSync(path.join(configs, type, 'perf', 'only-in-the-copy.yaml'), 'not: [a valid config\n');
    const after = await bin(['validate']);
    expect(after.stdout + after.stderr).toMatch(/only-in-the-copy\.yaml/);
    expect(Number(/(\d+) config\(s\)/.exec(after.stdout)?.[1] ?? before + 1)).toBe(before + 1);
    rmSync(path.join(configs, type, 'perf', 'only-in-the-copy.yaml'));
  });

  it('report finds its page script and the chart library through the bundle', async () => {
    const out = path.join(copy, 'report.html');
    const r = await bin(['report', path.join(realRoot, 'tests/fixtures/report/results.json'), '--output', out]);
    expect(r.stderr).toMatch(ranFromCopysBundle);
    expect(r.code).toBe(0);
    const html = readFileSync(out, 'utf8');
    const pageScript = readFileSync(path.join(copy, 'framework/results/report/page-script.js'), 'utf8');
    expect(html).toContain(pageScript.trim().split('\n').find((l) => l.trim().length > 20)!.trim());
    expect(html).toMatch(/Chart\.js v\d/);
  });

  it('cleanup (local-bin) and serve-bench load through the bundle', async () => {
    const cleanup = await bin(['cleanup', '--missing-ok'], { OUTPUT_PATH: path.join(copy, 'results'), SCHEDULER: 'local' });
    expect(cleanup.stderr).toMatch(ranFromCopysBundle);
    expect(cleanup.code).toBe(0);
    const serve = await bin(['serve-bench', '--help']);
    expect(serve.stderr).toMatch(ranFromCopysBundle);
    expect(serve.stdout + serve.stderr).toMatch(/usage|--/i);
  });

  it('ct-perftest --ranks 2: every rank runs the copy\'s bin from the bundle', async () => {
    const dir = path.join(copy, 'ct');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'm.txt'), '0 4K\n4K 0\n');
    writeFileSync(path.join(dir, 'c.yaml'), 'iters: 2\nwarmup_iters: 1\ntraffic_pattern:\n  matrix_file: m.txt\n  mem_type: cpu\n');
    const r = await bin(['ct-perftest', path.join(dir, 'c.yaml'), '--ranks', '2', '--backend', 'shm', '--verify-buffers']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^CT perftest: .*2 ranks, backend shm/m);
    // The launcher and both ranks (their stderr prefixed [rank k]).
    const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => ranFromCopysBundle.test(l));
    expect(lines.filter((l) => l.startsWith('[rank 0]'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('[rank 1]'))).toHaveLength(1);
    expect(existsSync(path.join(cacheDir, 'current.json'))).toBe(true);
  });
});
