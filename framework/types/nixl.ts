// The `nixl` test type: transfer benchmarks (CT perftests, matgen workloads, sweeps, MoE, KV pipe,
// and adapters for the real NIXL tools), one module per kind (nixl/kinds.ts). This module owns
// what all kinds share: the common sections and rules, metrics overrides and the generic
// verdict; its job (ranks under srun) is built in nixl/job/. The config layout is in nixl/kind.ts's header.
import { nixlCannotHold } from './nixl/node-fit.ts';
import path from 'node:path';
import type { RuleViolation, TestType, Verdict, VerdictContext } from '../contract/test-type.ts';
import { kindOf, nixlKinds } from './nixl/kinds.ts';
import { commonRules, metricsOverrideSpec, nixlConfig, nixlSchema, usesGpus } from './nixl/common.ts';
import type { Metric, MetricSpec } from '../metrics/metric.ts';
import { buildNixlJob, NIXL_TYPE } from './nixl/job/job-builder.ts';
import { missingTransportReason } from './nixl/transport-libraries.ts';

function rules(config: Record<string, unknown>, source: { file: string }): RuleViolation[] {
  const typed = nixlConfig(config);
  const kind = kindOf(config);
  const common = commonRules(typed, kind, nixlKinds);
  if (kind.section && config[kind.section] === undefined) return common;
  return [...common, ...kind.rules(config, path.dirname(source.file))];
}

/** Beyond the extractors' problems (which the core adds): metrics were found, and the kind's own checks. */
function verdict(ctx: VerdictContext): Verdict {
  const kind = kindOf(ctx.config);
  const failures: string[] = [];
  if (ctx.metrics.length === 0 && ctx.problems.length === 0) failures.push(`kind ${kind.name}: the job's logs yielded no metrics`);
  failures.push(...(kind.verdict?.(ctx.config, ctx.metrics) ?? []));
  return { passed: failures.length === 0, failures };
}

/** Where the engine's GPU ranks recorded their devices (RANK_GPU per rank: index, name, bus id, node). */
function rankDeviceSpecs(config: Record<string, unknown>): MetricSpec[] {
  const log = kindOf(config).rankLog;
  return log && usesGpus(nixlConfig(config)) ? [{ logFile: log, extractor: 'rank-devices', optional: true }] : [];
}

/**
 * The headline of metrics whose config is not at hand (a record of an older version, its config
 * gone): the first kind's whose picks find any of them. A kind whose headline reads its config
 * cannot pick without one and is passed over.
 */
function headlineWithoutConfig(metrics: readonly Metric[]): Metric[] {
  for (const kind of nixlKinds) {
    try {
      const picked = kind.headline?.({}, metrics) ?? [];
      if (picked.length > 0) return picked;
    } catch {
      // this kind's headline needs its config section
    }
  }
  return [];
}

export const nixlType: TestType = {
  name: NIXL_TYPE,
  description: 'Transfer benchmarks on the project\'s engine (CT perftests, KV matrices, sweeps, MoE, KV pipe) and the real NIXL tools',
  schema: nixlSchema(nixlKinds),
  rules,
  envOverrides: [],
  supportedGpus: (config) => nixlConfig(config).metadata?.supported_gpus,
  metrics: (config) => [...(metricsOverrideSpec(nixlConfig(config)) ?? kindOf(config).metrics(config)), ...rankDeviceSpecs(config)],
  buildJob: buildNixlJob,
  verdict,
  references: (config) => nixlConfig(config).benchmark.references,
  regression: (config) => (nixlConfig(config).benchmark as { regression?: unknown }).regression,
  // The benchmark kind and the transfer backend: the same file on another backend is another test.
  identity: (config) => ({ benchmark_kind: nixlConfig(config).benchmark.kind, transfer_backend: nixlConfig(config).benchmark.backend }),
  // the kind's figures; a config that replaces the metrics (benchmark.metrics) names its own
  headline: (metrics, config) => {
    if (nixlConfig(config).benchmark?.kind === undefined) return headlineWithoutConfig(metrics);
    const override = metricsOverrideSpec(nixlConfig(config));
    if (override) return metrics.filter((m) => override[0].names?.includes(m.name));
    return kindOf(config).headline?.(config, metrics) ?? [];
  },
  // the engine's kinds on UCX or libfabric need that library here (the real tools bring their own)
  unavailableHere: (config) => (kindOf(config).externalTool ? undefined : missingTransportReason(nixlConfig(config).benchmark.backend)),
  cannotHold: nixlCannotHold,
  csvInfo: (config) => ({ command: `disagg-bench ${nixlConfig(config).benchmark.kind}` }),
};

