// Golden job scripts of the nixl type: every config under test_configs/nixl/, and for each kind
// whose rank command is built from a flag table a variant with every option of its section set,
// rendered into job.sh with fixed paths. The golden file was written by the code before the
// table-driven builder replaced the per-kind ones; a refactor must leave every byte in place.
// (A new option or example changes the file: rerun with `-u` and review the diff.)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../../../../framework/config/load.ts';
import { validateConfig } from '../../../../framework/config/validate.ts';
import { formatIssue } from '../../../../framework/config/issue.ts';
import { nixlType } from '../../../../framework/types/nixl.ts';
import { nixlKind } from '../../../../framework/types/nixl/kinds.ts';
import { nixlConfig } from '../../../../framework/types/nixl/common.ts';
import { renderNixlJobScript } from '../../../../framework/types/nixl/job/job-script.ts';

type Json = Record<string, unknown>;
const root = path.resolve(import.meta.dirname, '../../../..');
const configsDir = path.join(root, 'test_configs/nixl');
const PACKAGE_ROOT = '/pkg';

function configFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return configFiles(file);
    return /\.ya?ml$/.test(e.name) ? [file] : [];
  });
}

const example = (rel: string) => parse(readFileSync(path.join(configsDir, rel), 'utf8')) as Json;
const withSection = (config: Json, section: string, values: Json, benchmark: Json = {}): Json => ({
  ...config,
  benchmark: { ...(config.benchmark as Json), ...benchmark },
  [section]: values,
});

/** Every option of the table-driven kinds' sections set (values valid for the schema). */
const everyOption: [name: string, config: Json][] = [
  ['ep-all-options', withSection(example('perf/ep_cuda_2gpu.yaml'), 'ep', {
    modes: ['dispatch', 'combine'], control_plane: true, control_plane_test: 'connect', tokens: 256, hidden: 1024,
    experts_per_rank: [4, 16], topk: 3, warmup: 2, iters: 7, seed: 5, layout: 'per-message', memory: 'gpu', initiated_by: 'gpu',
  })],
  ['ep-experts-scalar', withSection(example('perf/ep_shm_4ranks.yaml'), 'ep', { experts_per_rank: 8, modes: [], control_plane: true })],
  ['kvpipe-all-options', withSection(example('perf/kvpipe_shm_16x8M.yaml'), 'kvpipe', {
    buffer_size: '64M', num_objs: 12, obj_size: '2M', batch_size: 3, simulate_work: true, simulate_workload: true, work_scale: 0.25, num_rounds: 3, memory: 'host',
  })],
  ['kvpipe-obj-shape', withSection(example('perf/kvpipe_shm_16x8M.yaml'), 'kvpipe', { obj_shape: [4, 2, 16, 64], dtype: 'fp32', simulate_work: false })],
  ['sweep-all-options', withSection(example('perf/sweep_ucx_read_write.yaml'), 'sweep', {
    op_type: 'READ', initiator_seg_type: 'DRAM', target_seg_type: 'DRAM', scheme: 'pairwise', start_block_size: '8K', max_block_size: 1048576,
    start_batch_size: 1, max_batch_size: 2, num_iter: 9, warmup_iter: 3, large_blk_iter_ftr: 2, num_threads: 2, pipeline_depth: 4,
    total_buffer_size: '1G', num_initiator_dev: 1, num_target_dev: 1, check_consistency: true, expect: { '64K': 1.5, 1048576: 3 },
    tolerance: 0.2, link_bw: 12.5,
  })],
  ['ct-perftest-all-options', withSection(example('perf/ct_seed_read_shm.yaml'), 'ct_perftest', {
    ...(example('perf/ct_seed_read_shm.yaml').ct_perftest as Json), iters: 4, warmup_iters: 1, verify_buffers: true, print_recv_buffers: true,
  })],
  ['cache-engine-all-options', withSection(example('perf/cache_engine_shm.yaml'), 'cache_engine', {
    ...(example('perf/cache_engine_shm.yaml').cache_engine as Json), num_rounds: 2, seed: 3, buffer_size: '32M', memory: 'host', block_size: 16, chunk_size: 256, dtype: 'fp32',
  })],
];

const issues = (config: Json) => {
  const file = path.join(configsDir, 'perf/t.yaml');
  return validateConfig(nixlType, parseYaml(stringify(config), file), file, file, 'perf').map(formatIssue);
};

function rendered(name: string, config: Json): string {
  expect(issues(config), name).toEqual([]);
  const logDir = `/logs/nixl_perf_${name}`;
  const kind = nixlKind(nixlConfig(config).benchmark.kind);
  if (!kind) throw new Error(`${name}: unknown kind`);
  const rank = kind.rankCommand({ config, configDir: path.join(configsDir, 'perf'), logDir, packageRoot: PACKAGE_ROOT });
  const script = renderNixlJobScript({ testId: `nixl_perf_${name}`, config: nixlConfig(config), logDir, packageRoot: PACKAGE_ROOT, rank });
  const artefacts = Object.entries(rank.artefacts ?? {}).map(([file, text]) => `--- artefact ${file}\n${text}`);
  return [`===== ${name}`, `argv: ${JSON.stringify(rank.argv)}`, script, ...artefacts].join('\n').split(root).join('<root>');
}

describe('nixl job scripts (golden)', () => {
  it('every example config and every option of the flag-table kinds build the job they built before', async () => {
    const examples = configFiles(configsDir).map((file) => [path.relative(configsDir, file).replace(/\.ya?ml$/, '').replace(/\//g, '_'), example(path.relative(configsDir, file))] as const);
    expect(examples.length).toBeGreaterThanOrEqual(16);
    const text = [...examples, ...everyOption].map(([name, config]) => rendered(name, config)).join('\n');
    await expect(text).toMatchFileSnapshot('./__golden__/nixl-job-scripts.txt');
  });
});
