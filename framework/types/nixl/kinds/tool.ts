// Kinds that run the REAL NIXL tools where a user has them: `nixlbench`, `kvbench`,
// `nixl-ep-perf`, `lmcache`. The config names the tool by its kind and gives the tool's own options
// in the section of the same name; the adapter (runners/nixl/tools/) builds the exact command
// lines. The job: the prelude starts the job's private etcd and wipes the job's namespace (or
// wipes it in an external etcd), every task runs `disagg-bench nixl-tool run <spec>` (node
// artefacts, start order, the tool, its output teed per task), the cleanup writes
// test-report.txt and stops the etcd, also when the tool failed.
//   benchmark: { kind: nixlbench, ranks: 2, nodes: 2, backend: libfabric }
//   nixlbench:
//     path: /opt/nixl/bin/nixlbench
//     start_order: [1, 0]              # task 1 registers first and so becomes nixlbench's rank 0
//     options: { initiator_seg_type: VRAM, target_seg_type: VRAM, max_block_size: 64M }
//     env: { FI_PROVIDER: efa, FI_HMEM_DISABLE_P2P: "0" }
//     expect: { 64M: 46.48 }           # GB/s, within tolerance (default 0.1)
import path from 'node:path';
import fs from 'node:fs';
import type { NixlKind, NixlKindContext, RankCommand } from '../kind.ts';
import type { JsonSchema, RuleViolation } from '../../../contract/test-type.ts';
import type { Metric, MetricSpec } from '../../../metrics/metric.ts';
import { nixlConfig, nodesOf } from '../common.ts';
import { disaggBenchCommand } from '../job/job-script.ts';
import { checkExpectedBandwidth } from '../../../../runners/xfer/benches/sweep/sweep-expect.ts';
import { taskLog, TOOL_SPEC_FILE, type ToolSpec } from '../../../../runners/nixl/tool-spec.ts';
import type { ToolJob } from '../../../../runners/nixl/tools/tool-job.ts';
import { NIXLBENCH_RESERVED, nixlbenchSpec, type NixlbenchSection } from '../../../../runners/nixl/tools/nixlbench.ts';
import { checkKvbenchExtraArgs, KVBENCH_JSON, kvbenchSpec, type KvbenchSection } from '../../../../runners/nixl/tools/kvbench.ts';
import { nixlEpPerfSpec, type NixlEpPerfSection } from '../../../../runners/nixl/tools/nixl-ep-perf.ts';
import { lmcacheSpec, type LmcacheSection } from '../../../../runners/nixl/tools/lmcache.ts';
import { sizeBytes, int } from './kind-values.ts';
import { firstPresent } from '../../../metrics/headline-picks.ts';
import { sweepHeadline } from './sweep.ts';
import { epHeadline } from './ep.ts';
import { ctHeadline, sequentialHeadline } from './traffic-patterns.ts';
import { secondsSchema } from '../../../../runners/common/number-bounds.ts';

const str = { type: 'string', minLength: 1 };
const env = { type: 'object', additionalProperties: { type: 'string' } };
const etcd = { type: 'string', minLength: 1 }; // private | none | http://host:port
const words = { type: 'array', items: { type: 'string' } };
const object = (properties: Record<string, unknown>, required: string[] = []): JsonSchema => ({ type: 'object', additionalProperties: false, properties, required });

interface ToolAdapter<S> {
  name: string;
  section: string;
  schema: JsonSchema;
  backends: readonly string[];
  /** The program a `needs` check looks for. */
  binary: (s: S) => string;
  spec: (s: S, job: ToolJob, backend: string) => ToolSpec;
  rules: (s: S, ranks: number, nodes: number, configDir: string, config: Record<string, unknown>) => RuleViolation[];
  metrics: (s: S) => MetricSpec[];
  verdict?: (s: S, metrics: Metric[]) => string[];
  /** The figures the tool's users watch (TestType.headline). */
  headline: (s: S, metrics: readonly Metric[]) => Metric[];
}

/** A relative path in a config must exist (absolute ones may live on the cluster only). */
function checkRelativePath(configDir: string, value: string | undefined, at: string[]): RuleViolation[] {
  if (!value || path.isAbsolute(value) || !value.includes('/')) return [];
  return fs.existsSync(path.resolve(configDir, value)) ? [] : [{ path: at, message: `${value} does not exist (relative to ${configDir})` }];
}

const nixlbench: ToolAdapter<NixlbenchSection & { expect?: Record<string, number>; tolerance?: number }> = {
  name: 'nixlbench',
  section: 'nixlbench',
  schema: object({
    path: str,
    etcd,
    runtime: { enum: ['ETCD', 'ASIO'] },
    start_order: { type: 'array', items: int(0), uniqueItems: true },
    registration_timeout_s: secondsSchema(),
    options: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
    env,
    expect: { type: 'object', additionalProperties: { type: 'number', exclusiveMinimum: 0 } },
    tolerance: { type: 'number', minimum: 0 },
  }),
  backends: ['ucx', 'ucx_mo', 'libfabric', 'gds', 'gds_mt', 'posix', 'mooncake', 'hf3fs', 'obj', 'gpunetio', 'azure_blob'],
  binary: (s) => s.path ?? 'nixlbench',
  spec: (s, job, backend) => nixlbenchSpec(s, job, backend),
  rules(s, ranks, _nodes, configDir) {
    const out = checkRelativePath(configDir, s.path, ['nixlbench', 'path']);
    const options = s.options ?? {};
    for (const key of NIXLBENCH_RESERVED) if (key in options) out.push({ path: ['nixlbench', 'options', key], message: `${key} is set by the adapter (the job's etcd, or its ASIO listener with runtime: ASIO)` });
    if (s.runtime === 'ASIO') {
      if (ranks !== 2) out.push({ path: ['benchmark', 'ranks'], message: `nixlbench's ASIO runtime joins exactly 2 processes, not ${ranks}` });
      if (s.etcd !== undefined) out.push({ path: ['nixlbench', 'etcd'], message: 'runtime: ASIO uses no etcd: remove etcd (or use runtime: ETCD)' });
    }
    const processes = Number(options.num_initiator_dev ?? 1) + Number(options.num_target_dev ?? 1);
    if (String(options.mode ?? 'SG').toUpperCase() === 'SG' && processes !== ranks) {
      out.push({ path: ['benchmark', 'ranks'], message: `nixlbench in SG mode runs num_initiator_dev + num_target_dev = ${processes} processes, not ${ranks}` });
    }
    const order = s.start_order;
    if (order && (order.length !== ranks || order.some((t) => t >= ranks))) {
      out.push({ path: ['nixlbench', 'start_order'], message: `start_order must list each of the ${ranks} tasks 0..${ranks - 1} once` });
    }
    for (const key of Object.keys(s.expect ?? {})) {
      try {
        sizeBytes(key);
      } catch (err) {
        out.push({ path: ['nixlbench', 'expect', key], message: (err as Error).message });
      }
    }
    return out;
  },
  metrics: () => [{ logFile: 'nixlbench.log', extractor: 'nixlbench' }],
  headline: (_s, metrics) => sweepHeadline(metrics),
  verdict(s, metrics) {
    const measured = metrics.filter((m) => m.name === 'BW_GBPS').map((m) => ({ blockSize: Number(m.labels.block_size), batchSize: Number(m.labels.batch_size), gbps: m.value }));
    if (measured.length === 0) return ['no nixlbench table rows (B/W) in nixlbench.log'];
    const expected = Object.entries(s.expect ?? {}).map(([block, gbps]) => ({ blockSize: sizeBytes(block), gbps }));
    return checkExpectedBandwidth(expected, measured, s.tolerance ?? 0.1).map((miss) => `expected bandwidth: ${miss}`);
  },
};

const kvbench: ToolAdapter<KvbenchSection> = {
  name: 'kvbench',
  section: 'kvbench',
  schema: object(
    {
      python: str, script: str, command: { enum: ['ct-perftest', 'sequential-ct-perftest'] }, config_file: str,
      verify_buffers: { type: 'boolean' }, print_recv_buffers: { type: 'boolean' }, debug: { type: 'boolean' }, extra_args: words, etcd, env,
    },
    ['script', 'command', 'config_file'],
  ),
  backends: ['ucx'],
  binary: (s) => s.script,
  spec: (s, job) => kvbenchSpec(s, job),
  rules(s, _ranks, _nodes, configDir) {
    const out = [...checkRelativePath(configDir, s.script, ['kvbench', 'script'])];
    if (!fs.existsSync(path.resolve(configDir, s.config_file))) out.push({ path: ['kvbench', 'config_file'], message: `${s.config_file} does not exist (relative to ${configDir})` });
    const extra = checkKvbenchExtraArgs(s.command, s.extra_args ?? []);
    if (extra) out.push({ path: ['kvbench', 'extra_args'], message: extra });
    return out;
  },
  // sequential-ct-perftest writes its JSON; ct-perftest's results are the table rank 0 (task 0) logs.
  headline: (s, metrics) => (s.command === 'sequential-ct-perftest' ? sequentialHeadline(metrics) : ctHeadline(metrics)),
  metrics: (s) => [s.command === 'sequential-ct-perftest' ? { logFile: KVBENCH_JSON, extractor: 'sequential-ct-perftest' } : { logFile: taskLog({ tool: 'kvbench' }, 0), extractor: 'ct-perftest' }],
};

const nixlEpPerf: ToolAdapter<NixlEpPerfSection> = {
  name: 'nixl-ep-perf',
  section: 'nixl_ep_perf',
  schema: object(
    {
      python: str,
      dir: str,
      plane: { enum: ['data', 'control'] },
      processes_per_node: int(1),
      mode: { enum: ['dispatch', 'combine', 'e2e'] },
      tokens: int(1),
      hidden: int(128),
      experts_per_rank: { oneOf: [int(1), { type: 'array', items: int(1), minItems: 1 }] },
      topk: int(1),
      nvlink_backend: { enum: ['ipc', 'nixl', 'none'] },
      warmup: int(0),
      iters: int(1),
      skip_nic_discovery: { type: 'boolean' },
      discover_nics: { type: 'boolean' },
      test: { enum: ['init', 'connect', 'disconnect', 'destroy', 'cycle'] },
      use_tcp_store: { type: 'boolean' },
      use_etcd: { type: 'boolean' },
      etcd,
      env,
    },
    ['dir', 'plane', 'processes_per_node'],
  ),
  backends: ['ucx'],
  binary: (s) => path.join(s.dir, s.plane === 'control' ? 'test_control_plane.py' : 'test_data_plane.py'),
  spec: (s, job) => nixlEpPerfSpec(s, job),
  rules(s, ranks, nodes, configDir) {
    const out = checkRelativePath(configDir, s.dir, ['nixl_ep_perf', 'dir']);
    // the older and the current tests' names for one setting must not contradict each other
    if (s.use_tcp_store !== undefined && s.use_etcd !== undefined && s.use_tcp_store === s.use_etcd) {
      out.push({ path: ['nixl_ep_perf', 'use_etcd'], message: `use_etcd: ${s.use_etcd} contradicts use_tcp_store: ${s.use_tcp_store} (one metadata exchange: give one of them)` });
    }
    if (s.skip_nic_discovery !== undefined && s.discover_nics !== undefined && s.skip_nic_discovery === s.discover_nics) {
      out.push({ path: ['nixl_ep_perf', 'discover_nics'], message: `discover_nics: ${s.discover_nics} contradicts skip_nic_discovery: ${s.skip_nic_discovery} (give one of them)` });
    }
    if (ranks !== nodes) out.push({ path: ['benchmark', 'ranks'], message: `the EP tests start their ranks themselves: one task per node (ranks = nodes = ${nodes}), processes_per_node ranks each` });
    return out;
  },
  metrics: () => [{ logFile: 'nixl-ep-perf.log', extractor: 'nixl-ep' }],
  headline: (_s, metrics) => epHeadline(metrics),
};

const lmcache: ToolAdapter<LmcacheSection> = {
  name: 'lmcache',
  section: 'lmcache',
  schema: object(
    {
      python: str,
      script: str,
      num_objs: int(1),
      num_rounds: int(1),
      num_chunks: int(1),
      batch_size: int(1),
      simulate_work: { type: 'boolean' },
      simulate_flag: { enum: ['simulate-work', 'simulate-workload'] },
      sender_delay_s: { type: 'number', minimum: 0 },
      extra_args: words,
      env,
    },
    ['script'],
  ),
  backends: ['ucx'],
  binary: (s) => s.script,
  spec: (s, job) => lmcacheSpec(s, job),
  rules(s, ranks, _nodes, configDir) {
    const out = checkRelativePath(configDir, s.script, ['lmcache', 'script']);
    if (ranks !== 2) out.push({ path: ['benchmark', 'ranks'], message: `the LMCache tests run a sender and a receiver: 2 ranks, not ${ranks}` });
    return out;
  },
  // each task's own log: task 0 the sender, task 1 the receiver (the extractor labels {side} by it)
  metrics: () => [{ logFile: 'lmcache-task*.log', extractor: 'lmcache' }],
  // LMCache's tests print different lines: the pipe's pure-transfer throughput, else the mean over
  // rounds, else the per-round figures
  headline: (_s, metrics) => firstPresent(metrics, ['PURE_THROUGHPUT_GBPS_AVG', 'MEAN_THROUGHPUT_GBPS', 'AVG_THROUGHPUT_GBPS', 'THROUGHPUT_GBPS', 'TRANSFER_THROUGHPUT_GBPS']),
};

function toolKind<S>(adapter: ToolAdapter<S>): NixlKind & { binary(config: Record<string, unknown>): string } {
  const section = (config: Record<string, unknown>) => config[adapter.section] as S;
  return {
    name: adapter.name,
    section: adapter.section,
    sectionSchema: adapter.schema,
    backends: adapter.backends,
    externalTool: adapter.name,
    binary: (config) => adapter.binary(section(config)),
    rules(config, configDir) {
      const { benchmark } = nixlConfig(config);
      return adapter.rules(section(config), benchmark.ranks, nodesOf(nixlConfig(config)), configDir, config);
    },
    metrics: (config) => adapter.metrics(section(config)),
    rankCommand(ctx: NixlKindContext): RankCommand {
      const config = nixlConfig(ctx.config);
      const job: ToolJob = { logDir: ctx.logDir, configDir: ctx.configDir, ranks: config.benchmark.ranks, nodes: nodesOf(config), tag: path.basename(ctx.logDir) };
      const spec = adapter.spec(section(ctx.config), job, config.benchmark.backend);
      const specFile = path.join(ctx.logDir, TOOL_SPEC_FILE);
      const step = (...argv: string[]) => disaggBenchCommand(ctx.packageRoot, ['nixl-tool', ...argv]);
      const prelude: string[] = [];
      const cleanup = [`${step('report', specFile)} || true`];
      if (spec.etcd?.mode === 'private') {
        prelude.push(step('etcd-start', '--dir', spec.etcd.dir!, '--prefix', spec.etcd.prefix, '--host', job.nodes > 1 ? 'auto' : '127.0.0.1'));
        cleanup.push(`${step('etcd-stop', '--dir', spec.etcd.dir!)} || true`);
      } else if (spec.etcd) {
        prelude.push(step('etcd-wipe', '--endpoints', spec.etcd.endpoints!, '--prefix', spec.etcd.prefix));
      }
      return {
        argv: ['nixl-tool', 'run', specFile],
        logFile: `${adapter.name}.log`,
        artefacts: { [TOOL_SPEC_FILE]: `${JSON.stringify(spec, null, 2)}\n` },
        prelude,
        cleanup,
      };
    },
    headline: (config, metrics) => adapter.headline(section(config), metrics),
    verdict: adapter.verdict ? (config, metrics) => adapter.verdict!(section(config), metrics) : undefined,
  };
}

export const nixlbenchKind = toolKind(nixlbench);
export const kvbenchKind = toolKind(kvbench);
export const nixlEpPerfKind = toolKind(nixlEpPerf);
export const lmcacheKind = toolKind(lmcache);

