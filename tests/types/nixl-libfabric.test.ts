// `backend: libfabric` in the nixl configs: every engine kind takes it, benchmark.fi_provider
// becomes the ranks' FI_PROVIDER (and is refused where it means nothing or cannot reach), and the
// job keeps each node's fi_info (the benchmarking suite's artefacts) through `nixl-tool node-artefacts`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { parseYaml } from '../../framework/config/load.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { nixlKinds } from '../../framework/types/nixl/kinds.ts';

type Json = Record<string, unknown>;
const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'nixl-libfabric-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const example = parse(readFileSync(path.join(root, 'test_configs/nixl/perf/sweep_libfabric_tcp_2nodes.yaml'), 'utf8')) as Json;
const withBenchmark = (changes: Json): Json => ({ ...example, benchmark: { ...(example.benchmark as Json), ...changes } });

function issues(config: Json): string[] {
  const file = 'test_configs/nixl/perf/t.yaml';
  return validateConfig(nixlType, parseYaml(stringify(config), file), file, path.join(root, file)).map(formatIssue);
}

describe('backend: libfabric in nixl configs', () => {
  test('every kind that runs on the engine takes it; the example is valid', () => {
    const engineKinds = nixlKinds.filter((k) => !k.externalTool).map((k) => k.name);
    expect(engineKinds).toEqual(expect.arrayContaining(['ct-perftest', 'sequential-ct-perftest', 'matgen', 'sweep', 'ep', 'kvpipe']));
    for (const kind of nixlKinds.filter((k) => !k.externalTool)) expect(kind.backends, kind.name).toContain('libfabric');
    expect(issues(example)).toEqual([]);
  });

  test('fi_provider: only with libfabric, and never shm across nodes', () => {
    expect(issues(withBenchmark({ backend: 'ucx' }))).toEqual([expect.stringMatching(/benchmark\.fi_provider: is the libfabric provider; backend ucx does not use libfabric$/)]);
    expect(issues(withBenchmark({ fi_provider: 'shm' }))).toEqual([
      expect.stringMatching(/benchmark\.fi_provider: libfabric's shm provider reaches the ranks of one node only; across 2 nodes use tcp \(or efa, verbs\)$/),
    ]);
    expect(issues(withBenchmark({ fi_provider: 'shm', nodes: 1 }))).toEqual([]);
    expect(issues(withBenchmark({ fi_provider: 'tcp; rm -rf /' }))).toEqual([expect.stringMatching(/benchmark\.fi_provider/)]);
  });

  test('the job exports FI_PROVIDER and collects every node\'s fi_info before the ranks start', async () => {
    const logDir = path.join(scratch, 'job');
    const built = await nixlType.buildJob({ testId: 'nixl_perf_t', category: 'perf', config: example, logDir, workDir: root, packageRoot: root, gpuType: undefined });
    execFileSync('bash', ['-n', built.scriptPath]);
    const lines = readFileSync(built.scriptPath, 'utf8').split('\n');
    expect(lines).toContain('export FI_PROVIDER=tcp');
    const collect = lines.findIndex((l) => l.includes(' nixl-tool node-artefacts --dir "$LOG_DIR"'));
    const ranks = lines.findIndex((l) => l.includes(' sweep --backend libfabric '));
    expect(lines[collect]).toMatch(/^srun --nodes 2 --ntasks 2 --ntasks-per-node 1 "\$NODE_BIN" .*\|\| echo "fi_info artefacts: the collection step failed/);
    expect(ranks).toBeGreaterThan(collect);
    const ucx = await nixlType.buildJob({ testId: 'nixl_perf_u', category: 'perf', config: withBenchmark({ backend: 'ucx', fi_provider: undefined }), logDir: path.join(scratch, 'ucx'), workDir: root, packageRoot: root, gpuType: undefined });
    expect(readFileSync(ucx.scriptPath, 'utf8')).not.toMatch(/node-artefacts|FI_PROVIDER/);
  });

  test('nixl-tool node-artefacts writes fi_info-<node>.txt with the providers of this node', async () => {
    const dir = path.join(scratch, 'artefacts');
    const r = await execa('node', ['bin/disagg-bench.js', 'nixl-tool', 'node-artefacts', '--dir', dir], { cwd: root, env: { SLURMD_NODENAME: 'nodeA', FI_PROVIDER: 'tcp' }, reject: false, all: true });
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toBe('nixl-tool: nodeA: fi_info-nodeA.txt, gpu-info-nodeA.txt, efa-devices-nodeA.txt');
    expect(readFileSync(path.join(dir, 'fi_info-nodeA.txt'), 'utf8')).toMatch(/^\$ fi_info\nprovider: tcp;ofi_rxm\n/);
  });
});
