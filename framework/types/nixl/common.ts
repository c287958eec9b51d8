// What every nixl config shares (the layout is in kind.ts's header): the metadata, benchmark and
// slurm sections, their schema, their typed view and the rules that hold for every kind.
import type { JsonSchema, KeyPath, RuleViolation } from '../../contract/test-type.ts';
import type { MetricSpec } from '../../metrics/metric.ts';
import { checkRegexSpec, type MetricsOverride } from '../../metrics/extractors/regex.ts';
import { parseReferences } from '../../metrics/references.ts';
import { jobTimeSeconds } from '../../../runners/common/job-time.ts';
import { splitShellWords } from '../../../runners/common/shell.ts';
import type { NixlKind } from './kind.ts';
import { ucxSectionRules, ucxSectionSchema, type UcxSection } from './ucx-section.ts';
import { cudaCopyPaths } from '../../../runners/xfer/device-copy/copy-path.ts';
import { secondsSchema } from '../../../runners/common/number-bounds.ts';
import { regressionSchema } from '../../metrics/regression-thresholds.ts';
import { int } from './kinds/kind-values.ts';

export interface NixlConfig {
  metadata?: { description?: string; supported_gpus?: string[] };
  benchmark: {
    kind: string;
    ranks: number;
    /** Default 1. */
    nodes?: number;
    backend: string;
    /** libfabric provider of backend libfabric (tcp, shm, efa, verbs...): the ranks' FI_PROVIDER. */
    fi_provider?: string;
    /** XFER_TIMEOUT_S of the ranks: every wait and transfer (default: the engine's 300 s). */
    timeout_s?: number;
    /** backend cuda: what moves a plan's bytes (auto | copy-engine | kernel); XFER_CUDA_COPY of the ranks. */
    cuda_copy?: string;
    /** GPUs each node's ranks get (sbatch --gres=gpu:N; the local scheduler's CUDA_VISIBLE_DEVICES). */
    gpus_per_node?: number;
    /**
     * More ranks on a node than GPUs for them is refused (their transfers would be copies inside one
     * GPU); true allows it: ranks share GPUs (local rank modulo the GPUs), each rank's device recorded.
     */
    ranks_may_share_gpu?: boolean;
    references?: Record<string, unknown>;
    metrics?: MetricsOverride;
  };
  slurm?: { partition?: string; account?: string; job_time?: string; extra_args?: string };
  /** The engine's ucx backend (ucx-section.ts). */
  ucx?: UcxSection;
  [section: string]: unknown;
}

export const DEFAULT_JOB_TIME = '00:10:00';

/** The typed view of a schema-valid config. */
export function nixlConfig(config: Record<string, unknown>): NixlConfig {
  return config as unknown as NixlConfig;
}

export const nodesOf = (config: NixlConfig): number => config.benchmark.nodes ?? 1;

const nonEmpty = { type: 'string', minLength: 1 };
const section = (properties: Record<string, unknown>, required: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** The config's schema: the common sections, plus each kind's section (commonRules requires the kind's own). */
export function nixlSchema(kinds: readonly NixlKind[]): JsonSchema {
  const kindSections = kinds.filter((k) => k.section);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'nixl test config',
    type: 'object',
    additionalProperties: false,
    required: ['benchmark'],
    properties: {
      metadata: section({ description: { type: 'string' }, supported_gpus: { type: 'array', items: nonEmpty, minItems: 1 } }),
      benchmark: section(
        {
          kind: { enum: kinds.map((k) => k.name) },
          ranks: int(1),
          nodes: int(1),
          backend: nonEmpty,
          fi_provider: { type: 'string', pattern: '^[A-Za-z0-9_;^,-]+$' },
          timeout_s: secondsSchema(),
          cuda_copy: { enum: [...cudaCopyPaths] },
          gpus_per_node: int(0),
          ranks_may_share_gpu: { type: 'boolean' },
          references: { type: 'object' },
          regression: regressionSchema,
          metrics: section(
            {
              log_file: nonEmpty,
              extractor_pattern: nonEmpty,
              metric_names: { type: 'array', items: nonEmpty, minItems: 1 },
              unit: nonEmpty,
              higher_is_better: { type: 'boolean' },
            },
            ['log_file', 'extractor_pattern', 'metric_names'],
          ),
        },
        ['kind', 'ranks', 'backend'],
      ),
      slurm: section({ partition: nonEmpty, account: nonEmpty, job_time: nonEmpty, extra_args: { type: 'string' } }),
      ucx: ucxSectionSchema,
      ...Object.fromEntries(kindSections.map((k) => [k.section!, k.sectionSchema ?? { type: 'object' }])),
    },
  };
}

const violation = (path: KeyPath, message: string): RuleViolation => ({ path, message });

/** Backends that reach the ranks of one node only. */
const SAME_NODE_BACKENDS: Record<string, string> = { shm: 'ucx', cuda: 'nccl or ucx' };

/** GPU backends: their ranks need a GPU each (or ranks_may_share_gpu). */
const GPU_BACKENDS = ['cuda', 'nccl'];

/** Whether the config's ranks use GPUs: it asks for GPUs per node or runs a GPU backend. */
export function usesGpus(config: NixlConfig): boolean {
  return (config.benchmark.gpus_per_node ?? 0) > 0 || GPU_BACKENDS.includes(config.benchmark.backend);
}

/** Ranks per node beyond the GPUs per node would share GPUs: refused unless the config allows it. */
function gpuSharingRule(config: NixlConfig): RuleViolation[] {
  const { ranks, gpus_per_node: gpus, ranks_may_share_gpu: share } = config.benchmark;
  const perNode = ranks / nodesOf(config);
  if (!gpus || share || perNode <= gpus || !Number.isInteger(perNode)) return [];
  return [
    violation(
      ['benchmark', 'gpus_per_node'],
      `${perNode} ranks per node on ${gpus} GPU(s) per node would share GPUs (a transfer between two ranks of one GPU is a copy inside it); ` +
        'give each rank its own GPU, or set benchmark.ranks_may_share_gpu: true',
    ),
  ];
}

/** Rules every kind shares: the rank layout, the backend, slurm values, metrics and references. */
export function commonRules(config: NixlConfig, kind: NixlKind, allKinds: readonly NixlKind[]): RuleViolation[] {
  const out: RuleViolation[] = [];
  const { benchmark, slurm } = config;
  const nodes = nodesOf(config);
  if (benchmark.ranks % nodes !== 0) {
    out.push(violation(['benchmark', 'ranks'], `${benchmark.ranks} ranks cannot be spread evenly over ${nodes} nodes (ranks must be a multiple of nodes)`));
  }
  if (!kind.backends.includes(benchmark.backend)) {
    out.push(violation(['benchmark', 'backend'], `kind ${kind.name} runs on ${kind.backends.join(', ')}, not '${benchmark.backend}'`));
  } else if (nodes > 1 && SAME_NODE_BACKENDS[benchmark.backend]) {
    out.push(violation(['benchmark', 'nodes'], `backend ${benchmark.backend} reaches the ranks of one node only; across ${nodes} nodes use ${SAME_NODE_BACKENDS[benchmark.backend]}`));
  } else if (nodes > 1 && benchmark.backend === 'libfabric' && benchmark.fi_provider?.split(/[;,]/)[0] === 'shm') {
    out.push(violation(['benchmark', 'fi_provider'], `libfabric's shm provider reaches the ranks of one node only; across ${nodes} nodes use tcp (or efa, verbs)`));
  }
  if (benchmark.fi_provider !== undefined && benchmark.backend !== 'libfabric') {
    out.push(violation(['benchmark', 'fi_provider'], `is the libfabric provider; backend ${benchmark.backend} does not use libfabric`));
  }
  if (benchmark.cuda_copy !== undefined && benchmark.backend !== 'cuda') {
    out.push(violation(['benchmark', 'cuda_copy'], `chooses how the cuda backend copies; this config's backend is ${benchmark.backend}`));
  }
  if (kind.section && config[kind.section] === undefined) out.push(missingSection(kind));
  out.push(...ucxSectionRules(config, kind));
  for (const other of allKinds) {
    if (other !== kind && other.section && other.section !== kind.section && config[other.section] !== undefined) {
      out.push(violation([other.section], `belongs to kind ${other.name}; this config is kind ${kind.name}`));
    }
  }
  if (slurm?.job_time !== undefined) {
    try {
      jobTimeSeconds(slurm.job_time);
    } catch (err) {
      out.push(violation(['slurm', 'job_time'], (err as Error).message));
    }
  }
  if (slurm?.extra_args !== undefined) {
    try {
      splitShellWords(slurm.extra_args);
    } catch (err) {
      out.push(violation(['slurm', 'extra_args'], (err as Error).message));
    }
  }
  if (benchmark.metrics) {
    const problem = checkRegexSpec(benchmark.metrics.extractor_pattern, benchmark.metrics.metric_names);
    if (problem) out.push(violation(['benchmark', 'metrics'], problem));
  }
  out.push(...parseReferences(benchmark.references).errors.map((m) => violation(['benchmark', 'references'], m)));
  out.push(...gpuSharingRule(config));
  return out;
}

/** The kind's options are missing: nothing else about the kind can be checked. */
export function missingSection(kind: NixlKind): RuleViolation {
  return violation([kind.section!], `is required for kind ${kind.name} (its options)`);
}

/** benchmark.metrics, read by the 'regex' extractor, replaces the kind's default metrics. */
export function metricsOverrideSpec(config: NixlConfig): MetricSpec[] | undefined {
  const m = config.benchmark.metrics;
  if (!m) return undefined;
  return [{ logFile: m.log_file, extractor: 'regex', pattern: m.extractor_pattern, names: m.metric_names, unit: m.unit, higherIsBetter: m.higher_is_better }];
}
