// YAML merge keys in a disagg config, end to end through loading, validation
// and job building: the engine's files get the merged mappings as PyYAML would hand them to
// upstream's yaml.dump (own keys winning, no `<<` left), and validation sees the merged values.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadPlannedTest } from '../../framework/select/plan.ts';
import { testType } from '../../framework/types/registry.ts';
import { repoRoot } from '../fixtures/reliability/suite-run.ts';
import { readYamlSource } from '../../runners/xfer/benches/yaml-source.ts';

const example = fg.sync('test_configs/disagg/perf/*ctx1_gen1*.yaml', { cwd: repoRoot }).sort()[0];
const text = readFileSync(path.join(repoRoot, example), 'utf8').replace(/<([a-z_]+)>/g, '/filled/$1');

describe('merge keys in a disagg config', () => {
  it('reach ctx_config.yaml merged (ctx merges gen through its anchor), own keys winning, no << left', async () => {
    const merged = text.replace(/^ {2}gen:\n/m, '  gen: &gen\n').replace(/^ {2}ctx:\n/m, '  ctx:\n    <<: *gen\n');
    const dir = mkdtempSync(path.join(tmpdir(), 'merge-keys-'));
    const absFile = path.join(dir, 'merged.yaml');
    writeFileSync(absFile, merged);
    const planned = loadPlannedTest({ id: 'disagg_perf_merged', testType: 'disagg', category: 'perf', stem: 'merged', absFile, displayFile: 'test_configs/disagg/perf/merged.yaml' }, { gpuType: 'GB200', source: 'GPU_TYPE' }, { MODEL_DIR: '/m', DATASET_DIR: '/d' });
    expect(planned.issues).toEqual([]);
    const logDir = path.join(dir, 'job');
    await testType('disagg')!.buildJob({ testId: planned.id, category: 'perf', config: planned.resolved!.config, logDir, workDir: repoRoot, packageRoot: repoRoot, gpuType: 'GB200' });
    const original = parse(text) as { worker_config: { gen: Record<string, unknown>; ctx: Record<string, unknown> } };
    // PyYAML's flatten_mapping: the merged pairs first, then the mapping's own, which win.
    const expected = { ...original.worker_config.gen, ...original.worker_config.ctx };
    const ctxText = readFileSync(path.join(logDir, 'ctx_config.yaml'), 'utf8');
    expect(parse(ctxText)).toEqual(expected);
    expect(ctxText).not.toContain('<<');
    expect(parse(readFileSync(path.join(logDir, 'gen_config.yaml'), 'utf8'))).toEqual(original.worker_config.gen);
  });

  it('validation sees merged values, located where they are written', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'merge-keys-'));
    const absFile = path.join(dir, 'bad.yaml');
    const lines = text.replace(/^ {2}concurrency_list: .*\n/m, '  <<: {concurrency_list: {a: 1}}\n');
    writeFileSync(absFile, lines);
    const planned = loadPlannedTest({ id: 'disagg_perf_bad', testType: 'disagg', category: 'perf', stem: 'bad', absFile, displayFile: 'bad.yaml' }, { gpuType: 'GB200', source: 'GPU_TYPE' }, { MODEL_DIR: '/m', DATASET_DIR: '/d' });
    const issue = planned.issues.find((i) => i.path === 'benchmark.concurrency_list');
    expect(issue, JSON.stringify(planned.issues)).toBeDefined();
    expect(issue!.message).toMatch(/got a mapping/);
    expect(issue!.line).toBe(lines.split('\n').findIndex((l) => l.includes('<<: {concurrency_list')) + 1);
  });

  it('nixl configs and the engine\'s own benchmark configs merge the same way', () => {
    const nixl = readFileSync(path.join(repoRoot, 'test_configs/nixl/perf/ct_seed_write_shm.yaml'), 'utf8')
      .replace(/^ {2}iters: 20\n {2}warmup_iters: 2\n/m, '  <<: {iters: 20, warmup_iters: 9}\n  warmup_iters: 2\n');
    const dir = mkdtempSync(path.join(tmpdir(), 'merge-keys-'));
    // The matrix file it names is found beside the copy.
    cpSync(path.join(repoRoot, 'test_configs/nixl/perf/matrices'), path.join(dir, 'matrices'), { recursive: true });
    const absFile = path.join(dir, 'm.yaml');
    writeFileSync(absFile, nixl);
    const planned = loadPlannedTest({ id: 'nixl_perf_m', testType: 'nixl', category: 'perf', stem: 'm', absFile, displayFile: 'm.yaml' }, { gpuType: undefined, source: 'none' }, {});
    expect(planned.issues).toEqual([]);
    expect(planned.config!.ct_perftest).toMatchObject({ iters: 20, warmup_iters: 2 });
    const engineFile = path.join(dir, 'bench.yaml');
    writeFileSync(engineFile, 'defaults: &d {op: WRITE, shards: 2}\npattern:\n  <<: *d\n  shards: 4\n');
    expect(readYamlSource(engineFile).data).toEqual({ defaults: { op: 'WRITE', shards: 2 }, pattern: { op: 'WRITE', shards: 4 } });
  });
});
