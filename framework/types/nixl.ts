// The `nixl` test type: transfer benchmarks (CT perftests, matgen workloads, sweeps, MoE, KV pipe,
// and adapters for the real NIXL tools), one module per kind (nixl/kinds.ts). This module owns
// what all kinds share: the common sections and rules, the job (ranks under srun), resources,
// metrics overrides and the generic verdict. The config layout is in nixl/kind.ts's header.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuiltJob, JobBuildContext, RuleViolation, TestType, Verdict, VerdictContext } from './test-type.ts';
import { readSettings } from '../settings.ts';
import { nixlKind, nixlKinds } from './nixl/kinds.ts';
import type { NixlKind } from './nixl/kind.ts';
import { commonRules, metricsOverrideSpec, nixlConfig, nixlSchema, usesGpus } from './nixl/common.ts';
import type { MetricSpec } from '../metrics/metric.ts';
import { nixlResources, renderNixlJobScript } from './nixl/job-script.ts';
import { JOB_SCRIPT_FILE } from '../scheduler/log-folder.ts';

const TYPE_NAME = 'nixl';

/** The folder of a config of category `category`: kinds resolve relative paths (matrix files) against it. */
export function nixlConfigDir(workDir: string, category: string): string {
  return path.join(workDir, 'test_configs', TYPE_NAME, category);
}

function kindOf(config: Record<string, unknown>): NixlKind {
  const name = nixlConfig(config).benchmark.kind;
  const kind = nixlKind(name);
  if (!kind) throw new Error(`benchmark.kind '${name}' is not a registered nixl kind (known: ${nixlKinds.map((k) => k.name).join(', ')})`);
  return kind;
}

function rules(config: Record<string, unknown>, source?: { file: string }): RuleViolation[] {
  const typed = nixlConfig(config);
  const kind = kindOf(config);
  const common = commonRules(typed, kind, nixlKinds);
  if (kind.section && config[kind.section] === undefined) return common;
  const configDir = source ? path.dirname(source.file) : nixlConfigDir(readSettings().workDir, 'perf');
  return [...common, ...kind.rules(config, configDir)];
}

async function buildJob(ctx: JobBuildContext): Promise<BuiltJob> {
  const config = nixlConfig(ctx.config);
  const kind = kindOf(ctx.config);
  const configDir = nixlConfigDir(ctx.workDir, ctx.category);
  const problems = kind.rules(ctx.config, configDir);
  if (problems.length > 0) {
    throw new Error(`the job cannot be built (config folder ${configDir}): ${problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
  }
  const rank = kind.rankCommand({ config: ctx.config, configDir, logDir: ctx.logDir, packageRoot: ctx.packageRoot });
  await mkdir(ctx.logDir, { recursive: true });
  for (const [name, text] of Object.entries(rank.artefacts ?? {})) {
    const file = path.join(ctx.logDir, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  const scriptPath = path.join(ctx.logDir, JOB_SCRIPT_FILE);
  await writeFile(scriptPath, renderNixlJobScript({ testId: ctx.testId, config, logDir: ctx.logDir, packageRoot: ctx.packageRoot, rank }));
  await chmod(scriptPath, 0o755);
  return { scriptPath, resources: nixlResources(config) };
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

export const nixlType: TestType = {
  name: TYPE_NAME,
  description: 'Transfer benchmarks on the project\'s engine (CT perftests, KV matrices, sweeps, MoE, KV pipe) and the real NIXL tools',
  schema: nixlSchema(nixlKinds),
  rules,
  envOverrides: [],
  supportedGpus: (config) => nixlConfig(config).metadata?.supported_gpus,
  metrics: (config) => [...(metricsOverrideSpec(nixlConfig(config)) ?? kindOf(config).metrics(config)), ...rankDeviceSpecs(config)],
  buildJob,
  verdict,
  references: (config) => nixlConfig(config).benchmark.references,
  regression: (config) => (nixlConfig(config).benchmark as { regression?: unknown }).regression,
  // The benchmark kind and the transfer backend: the same file on another backend is another test.
  identity: (config) => ({ benchmark_kind: nixlConfig(config).benchmark.kind, transfer_backend: nixlConfig(config).benchmark.backend }),
  csvInfo: (config) => ({ command: `disagg-bench ${nixlConfig(config).benchmark.kind}` }),
};

