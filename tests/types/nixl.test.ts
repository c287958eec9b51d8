// The nixl test type with the CT perftest kinds: schema and rules (errors located in the config,
// matrix errors with the matrix's own file:line:col), metrics and overrides, the job builder's
// artefacts, job.sh (srun line, quoting, bash -n) and resources, the verdict.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, test } from 'vitest';
import { parseYaml } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { nixlType } from '../../framework/types/nixl.ts';
import { testType } from '../../framework/types/registry.ts';
import { testTypeNames } from '../../framework/contract/names.ts';

type Json = Record<string, unknown>;
const root = path.resolve(import.meta.dirname, '../..');
const examples = path.join(root, 'test_configs/nixl/perf');
const scratch = mkdtempSync(path.join(tmpdir(), 'nixl-type-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const example = (name: string) => parse(readFileSync(path.join(examples, `${name}.yaml`), 'utf8')) as Json;

/** Validation as the core runs it; a config at the examples' place (matrix paths relative to it). */
function issues(config: Json | string): string[] {
  const file = 'test_configs/nixl/perf/t.yaml';
  const parsed = parseYaml(typeof config === 'string' ? config : stringify(config), file);
  return validateConfig(nixlType, parsed, file, path.join(root, file)).map(formatIssue);
}

/** A deep patch: mappings merge, everything else replaces. */
function patch(base: Json, changes: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(changes)) {
    const current = out[k];
    out[k] = v && typeof v === 'object' && !Array.isArray(v) && current && typeof current === 'object' && !Array.isArray(current) ? patch(current as Json, v as Json) : v;
  }
  return out;
}

const write = patch(example('ct_seed_write_shm'), {});

describe('registration and examples', () => {
  test('nixl is a registered test type and every example config is valid', () => {
    expect(testTypeNames).toContain('nixl');
    expect(testType('nixl')).toBe(nixlType);
    for (const name of ['ct_seed_write_shm', 'ct_seed_read_shm', 'sequential_shm', 'matgen_llama405b_shm']) expect(issues(example(name)), name).toEqual([]);
  });

  test('no supported_gpus: the config needs no GPU; a list is passed on', () => {
    expect(nixlType.supportedGpus(write)).toBeUndefined();
    expect(nixlType.supportedGpus(patch(write, { metadata: { supported_gpus: ['H200'] } }))).toEqual(['H200']);
  });
});

describe('validation', () => {
  test("a matrix_file relative to the working directory (kvbench's base) is found there when the config's folder has none", () => {
    const fromCwd = path.relative(process.cwd(), path.join(examples, 'matrices/seed-example.txt'));
    expect(issues(patch(write, { ct_perftest: { traffic_pattern: { matrix_file: fromCwd } } }))).toEqual([]);
  });

  test('a matrix that does not fit benchmark.ranks is located at matrix_file', () => {
    const text = readFileSync(path.join(examples, 'ct_seed_write_shm.yaml'), 'utf8').replace('ranks: 4', 'ranks: 2');
    const line = text.split('\n').findIndex((l) => l.includes('matrix_file')) + 1;
    expect(issues(text)).toEqual([
      `test_configs/nixl/perf/t.yaml:${line}:5 ct_perftest.traffic_pattern.matrix_file: ${path.join(examples, 'matrices/seed-example.txt')}: the matrix is 4 x 4 but the run has 2 ranks`,
    ]);
  });

  test("a bad cell is reported with the matrix's own file:line:col (rules given the config's file)", () => {
    const dir = path.join(scratch, 'cfg');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'm.txt'), '0 1K\n# a comment\n0 12Q\n');
    const config = patch(write, { benchmark: { ranks: 2 }, ct_perftest: { traffic_pattern: { matrix_file: 'm.txt' } } });
    const rules = nixlType.rules as (c: Json, source: { file: string }) => { path: (string | number)[]; message: string }[];
    expect(rules(config, { file: path.join(dir, 'x.yaml') })).toEqual([
      { path: ['ct_perftest', 'traffic_pattern', 'matrix_file'], message: `${path.join(dir, 'm.txt')}:3:3 '12Q' is not a size (bytes, or a number with a unit K, M, G = 1024, 1024^2, 1024^3, or B) (row 1, column 1)` },
    ]);
    expect(rules(patch(config, { ct_perftest: { traffic_pattern: { matrix_file: 'none.txt' } } }), { file: path.join(dir, 'x.yaml') })[0].message).toMatch(/matrix file none\.txt not found: neither .*none\.txt \(relative to the config's folder\) nor .*none\.txt \(relative to the working directory, where kvbench looks\) exists/);
  });

  test('memory the backend cannot move, shm across nodes, uneven ranks, unknown backend', () => {
    const mem = issues(patch(write, { ct_perftest: { traffic_pattern: { mem_type: 'VRAM' } } }));
    expect(mem).toEqual([expect.stringMatching(/ct_perftest\.traffic_pattern\.mem_type: mem_type VRAM is GPU memory, but backend shm moves host memory: set mem_type to cpu or dram$/)]);
    expect(issues(patch(write, { benchmark: { nodes: 2 } }))).toEqual([expect.stringMatching(/benchmark\.nodes: backend shm reaches the ranks of one node only; across 2 nodes use ucx$/)]);
    expect(issues(patch(write, { benchmark: { nodes: 3, backend: 'ucx' } }))).toEqual([expect.stringMatching(/benchmark\.ranks: 4 ranks cannot be spread evenly over 3 nodes/)]);
    expect(issues(patch(write, { benchmark: { backend: 'tcp' } }))).toEqual([expect.stringMatching(/benchmark\.backend: kind ct-perftest runs on shm, ucx, cuda, nccl, libfabric, not 'tcp'/)]);
    expect(issues(patch(write, { benchmark: { backend: 'cuda' } }))).toEqual([expect.stringMatching(/mem_type cpu is host memory, but backend cuda moves GPU memory: set mem_type to cuda or vram/)]);
  });

  test("the kind's section is required, another kind's refused, unknown keys named", () => {
    const noSection = { ...write };
    delete noSection.ct_perftest;
    expect(issues(noSection)).toEqual([expect.stringMatching(/t\.yaml:1:1 ct_perftest: is required for kind ct-perftest \(its options\)/)]);
    const both = { ...write, sequential_ct_perftest: example('sequential_shm').sequential_ct_perftest };
    expect(issues(both)).toEqual([expect.stringMatching(/sequential_ct_perftest: belongs to kind sequential-ct-perftest; this config is kind ct-perftest/)]);
    expect(issues(patch(write, { ct_perftest: { iterations: 3 } }))).toEqual([expect.stringMatching(/ct_perftest\.iterations: is not a known key here/)]);
    // the sequential test's keys in the CT kind are refused saying why (kvbench's ct-perftest ignores them)
    expect(issues(patch(write, { ct_perftest: { traffic_pattern: { sleep_before_launch_sec: 2 } } }))).toEqual([
      expect.stringMatching(/ct_perftest\.traffic_pattern\.sleep_before_launch_sec: sleep_before_launch_sec is not applied by ct-perftest, .*; use the sequential-ct-perftest kind for it$/),
    ]);
    expect(issues(patch(write, { benchmark: { kind: 'alltoallv' } }))[0]).toMatch(/benchmark\.kind: expected one of "ct-perftest", "sequential-ct-perftest", "matgen"/);
  });

  test('slurm values, the metrics override and references are checked', () => {
    expect(issues(patch(write, { slurm: { job_time: '10 min' } }))).toEqual([expect.stringMatching(/slurm\.job_time: job_time "10 min" is not HH:MM:SS/)]);
    expect(issues(patch(write, { slurm: { extra_args: "--comment 'open" } }))).toEqual([expect.stringMatching(/slurm\.extra_args: unterminated ' quote/)]);
    const metrics = { log_file: 'ct_perftest.log', extractor_pattern: 'Aggregate (\\d+)', metric_names: ['A', 'B'] };
    expect(issues(patch(write, { benchmark: { metrics } }))).toEqual([expect.stringMatching(/benchmark\.metrics: extractor_pattern has 1 value capture group\(s\) but metric_names has 2/)]);
    expect(issues(patch(write, { benchmark: { references: { AVG_BW_GBPS: [1, 0.1, 0.1] } } }))).toEqual([expect.stringMatching(/benchmark\.references: reference 'AVG_BW_GBPS': lower must be a number <= 0/)]);
  });

  test('sequential: every pattern checked; shared buffers cannot be verified', () => {
    const seq = example('sequential_shm');
    const patterns = (seq.sequential_ct_perftest as Json).traffic_patterns as Json[];
    const bad = patch(seq, { sequential_ct_perftest: { share_buffers: true, traffic_patterns: [patterns[0], { ...patterns[1], mem_type: 'cuda' }] } });
    expect(issues(bad)).toEqual([
      expect.stringMatching(/sequential_ct_perftest\.traffic_patterns\[1\]\.mem_type: mem_type cuda is GPU memory/),
      expect.stringMatching(/sequential_ct_perftest\.share_buffers: shared buffers put every pattern in the same window/),
    ]);
  });

  test('matgen: the recipe must be possible and give benchmark.ranks ranks', () => {
    const matgen = example('matgen_llama405b_shm');
    expect(issues(patch(matgen, { benchmark: { ranks: 8 } }))).toEqual([expect.stringMatching(/benchmark\.ranks: the recipe has \(1 prefill \+ 1 decode nodes\) \* ppn 8 = 16 ranks, not 8/)]);
    expect(issues(patch(matgen, { matgen: { decode_tp: 2 } }))).toEqual([expect.stringMatching(/ matgen: prefill tp \(4\) must be <= decode tp \(2\)/)]);
    const noMem = patch(matgen, {});
    delete (noMem.matgen as Json).mem_type;
    expect(issues(noMem)).toEqual([expect.stringMatching(/matgen\.mem_type: the default mem_type cuda is GPU memory, but backend shm moves host memory/)]);
  });
});

describe('metrics', () => {
  test("each kind's JSON report by default; benchmark.metrics replaces it with the regex extractor", () => {
    expect(nixlType.metrics(write, 'perf')).toEqual([expect.objectContaining({ logFile: 'ct_perftest.json', extractor: 'ct-perftest' })]);
    expect(nixlType.metrics(example('matgen_llama405b_shm'), 'perf')).toEqual([expect.objectContaining({ logFile: 'sequential_ct_perftest.json', extractor: 'sequential-ct-perftest' })]);
    const metrics = { log_file: 'ct_perftest.log', extractor_pattern: '^ +(\\d+) +([\\d.]+)', metric_names: ['ITERS', 'TOTAL_S'], unit: 's' };
    expect(nixlType.metrics(patch(write, { benchmark: { metrics } }), 'perf')).toEqual([
      { logFile: 'ct_perftest.log', extractor: 'regex', pattern: metrics.extractor_pattern, names: ['ITERS', 'TOTAL_S'], unit: 's', higherIsBetter: undefined },
    ]);
    expect(nixlType.references!(patch(write, { benchmark: { references: { AVG_BW_GBPS: [1, -0.5, null] } } }))).toEqual({ AVG_BW_GBPS: [1, -0.5, null] });
  });

  test('verdict: no metrics at all fails; metrics pass', () => {
    const ctx = { testId: 't', category: 'perf', config: write, logDir: scratch, problems: [] };
    expect(nixlType.verdict({ ...ctx, metrics: [] })).toEqual({ passed: false, failures: ["kind ct-perftest: the job's logs yielded no metrics"] });
    expect(nixlType.verdict({ ...ctx, metrics: [{ name: 'AVG_BW_GBPS', value: 1, unit: 'GB/s', labels: {} }] })).toEqual({ passed: true, failures: [] });
  });
});

describe('job builder', () => {
  let jobs = 0;
  async function build(config: Json) {
    // A log folder whose path needs quoting.
    const logDir = path.join(scratch, `job ${++jobs} it's $HOME`);
    const built = await nixlType.buildJob({ testId: 'nixl_perf_t', category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType: undefined });
    const read = (name: string) => readFileSync(path.join(logDir, name), 'utf8');
    execFileSync('bash', ['-n', built.scriptPath]);
    return { built, logDir, read, script: read('job.sh') };
  }

  test('ct-perftest: the seed config and the matrix copied, srun runs every rank of disagg-bench, values quoted', async () => {
    const job = await build(patch(write, { slurm: { partition: 'debug', account: 'acct', job_time: '00:03:00', extra_args: "--comment 'a b'" }, benchmark: { gpus_per_node: 2 } }));
    expect(parse(job.read('ct_perftest.yaml'))).toEqual({ iters: 20, warmup_iters: 2, traffic_pattern: { matrix_file: 'ct_matrix.txt', shards: 2, mem_type: 'cpu', xfer_op: 'WRITE' } });
    expect(job.read('ct_matrix.txt')).toBe(readFileSync(path.join(examples, 'matrices/seed-example.txt'), 'utf8'));
    expect(job.read('matrix_sources.txt')).toBe(`ct_matrix.txt <- matrix_file matrices/seed-example.txt: read ${path.join(examples, 'matrices/seed-example.txt')}, relative to the config's folder\n`);
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    expect(job.script).toContain(
      `srun --nodes 1 --ntasks 4 --ntasks-per-node 4 '--kill-on-bad-exit=1' "$NODE_BIN" ${path.join(root, 'bin/disagg-bench.js')} ct-perftest ` +
        `${q(path.join(job.logDir, 'ct_perftest.yaml'))} --backend shm --json-output-path ${q(path.join(job.logDir, 'ct_perftest.json'))} --verify-buffers >"$RANK_LOG" 2>&1 || status=$?`,
    );
    expect(job.script).toContain('export XFER_TIMEOUT_S=60');
    expect(job.script).not.toContain('--mpi');
    // The quoted folder is exactly the folder, $HOME and all, once bash reads it.
    const assignment = job.script.split('\n').find((l) => l.startsWith('LOG_DIR='))!;
    expect(execFileSync('bash', ['-c', `${assignment}; printf %s "$LOG_DIR"`], { encoding: 'utf8' })).toBe(job.logDir);
    expect(job.built.resources).toEqual({ nodes: 1, ntasks: 4, ntasksPerNode: 4, timeLimitSec: 180, gpusPerNode: 2, partition: 'debug', account: 'acct', extraArgs: ['--comment', 'a b'] });
    expect((await build(write)).built.resources).toEqual({ nodes: 1, ntasks: 4, ntasksPerNode: 4, timeLimitSec: 300 });
    // kvbench's --print-recv-buffers, from the section's print_recv_buffers.
    expect((await build(patch(write, { ct_perftest: { print_recv_buffers: true } }))).script).toMatch(/ --verify-buffers --print-recv-buffers >"\$RANK_LOG"/);
  });

  test('benchmark.cuda_copy reaches the ranks as XFER_CUDA_COPY', async () => {
    const job = await build(patch(write, { benchmark: { backend: 'cuda', cuda_copy: 'kernel' }, ct_perftest: { traffic_pattern: { mem_type: 'cuda' } } }));
    expect(job.script).toContain("export XFER_CUDA_COPY=kernel");
    expect((await build(write)).script).not.toContain('XFER_CUDA_COPY');
  });

  test('the default job time is 10 minutes; several nodes split the tasks', async () => {
    const job = await build(patch(write, { slurm: { job_time: undefined }, benchmark: { backend: 'ucx', nodes: 2 } }));
    expect(job.built.resources).toMatchObject({ nodes: 2, ntasks: 4, ntasksPerNode: 2, timeLimitSec: 600 });
    expect(job.script).toContain('srun --nodes 2 --ntasks 4 --ntasks-per-node 2 ');
  });

  test('sequential: every matrix copied into matrices/, the options passed on', async () => {
    const job = await build(example('sequential_shm'));
    expect((await build(patch(example('sequential_shm'), { sequential_ct_perftest: { print_recv_buffers: true } }))).script).toContain(' --verify-buffers --print-recv-buffers ');
    const seq = parse(job.read('sequential_ct_perftest.yaml')) as { traffic_patterns: Json[] };
    expect(seq.traffic_patterns.map((p) => p.matrix_file)).toEqual(['matrices/matrix_0.txt', 'matrices/matrix_1.txt', 'matrices/matrix_2.txt']);
    expect(seq.traffic_patterns[1]).toMatchObject({ xfer_op: 'READ', shards: 3, sleep_before_launch_sec: 1.2, sleep_after_launch_sec: 0.5, metadata: { isl: 2500 } });
    expect(job.read('matrices/matrix_2.txt')).toBe(readFileSync(path.join(examples, 'matrices/seq-alltoall.txt'), 'utf8'));
    expect(job.script).toMatch(/ sequential-ct-perftest '.+\/sequential_ct_perftest\.yaml' --backend shm --json-output-path '.+\/sequential_ct_perftest\.json' --sleep-scale 0\.001 --isolation-iters 5 --warmup-iters 1 --workload-iters 2 --verify-buffers --sleep-before-launch >"\$RANK_LOG"/);
  });

  test('matgen: the matrices are generated in the job, then the sequential test runs their metadata.yaml', async () => {
    const job = await build(example('matgen_llama405b_shm'));
    const lines = job.script.split('\n');
    const generate = lines.findIndex((l) => l.includes(' matgen --model llama-405b'));
    const run = lines.findIndex((l) => l.startsWith('srun '));
    expect(generate).toBeGreaterThan(0);
    expect(run).toBeGreaterThan(generate);
    expect(lines[generate]).toContain('--num-prefill-nodes 1 --num-decode-nodes 1 --prefill-tp 4 --decode-tp 8 --isl-mean 64');
    expect(lines[generate]).toMatch(/--mem-type cpu --results-dir '.+\/matrices' 2>&1 \| tee "\$LOG_DIR\/matgen\.log"$/);
    expect(lines[run]).toMatch(/--ntasks 16 .* sequential-ct-perftest '.+\/matrices\/metadata\.yaml' --backend shm .*--sleep-scale 0\.001/);
  });

  test('a matrix that vanished before the job is built fails the build, naming the folder', async () => {
    const config = patch(write, { ct_perftest: { traffic_pattern: { matrix_file: 'matrices/gone.txt' } } });
    await expect(build(config)).rejects.toThrow(/the job cannot be built \(config folder .*test_configs\/nixl\/perf\): ct_perftest\.traffic_pattern\.matrix_file: matrix file matrices\/gone\.txt not found: neither /);
  });
});
