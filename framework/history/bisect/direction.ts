// Whether higher or lower is better for the metric a bisection follows, from the metric's definition,
// never from the values: a latency that happens to be lower at the bad end is still a latency. In
// order: the direction the ends' runs recorded (their extractor's, kept in the history); the one
// the test's config defines (a `benchmark.metrics` override's `higher_is_better`, read through the
// test type's metric specs); the one of a serving metric known by name (the benchmark client's
// summary fields, the latency statistics). None of these: the bisection is refused.
import { discoverConfigs } from '../../config/discover.ts';
import { readYamlFileSync } from '../../config/load.ts';
import { testType } from '../../types/registry.ts';
import { knownMetric } from '../upstream-csv.ts';
import { UsageError } from '../../../runners/common/errors.ts';
import type { MetricRef } from './metric-ref.ts';
import type { Reference } from './references.ts';

export interface Direction {
  higherIsBetter: boolean;
  /** Where it was read, for the first progress line. */
  from: string;
}

/** The direction the test's config gives the metric (its test type's metric specs), if it gives one. */
export function configDirection(workDir: string, testId: string, type: string, metric: string): boolean | undefined {
  const file = discoverConfigs(workDir, type).files.find((f) => f.id === testId);
  const definition = testType(type);
  if (!file || !definition) return undefined;
  const parsed = readYamlFileSync(file.absFile, file.displayFile);
  if (parsed.issues.length > 0 || typeof parsed.data !== 'object' || parsed.data === null) return undefined;
  try {
    const specs = definition.metrics(parsed.data as Record<string, unknown>, file.category);
    return specs.find((s) => s.higherIsBetter !== undefined && (s.names ?? []).includes(metric))?.higherIsBetter;
  } catch {
    return undefined; // a config its type cannot read defines nothing: `disagg-bench validate` says why
  }
}

export function metricDirection(metric: MetricRef, ends: readonly Reference[], where: { workDir: string; testId: string; testType: string }): Direction {
  const recorded = ends.filter((e) => e.higherIsBetter !== undefined);
  if (recorded.length === 2 && recorded[0].higherIsBetter !== recorded[1].higherIsBetter) {
    throw new UsageError(`--metric ${metric.name}: the good run records ${recorded[0].higherIsBetter ? 'higher' : 'lower'} is better and the bad run ${recorded[1].higherIsBetter ? 'higher' : 'lower'}: the two runs measured different things`, 'metric');
  }
  if (recorded.length > 0) return { higherIsBetter: recorded[0].higherIsBetter!, from: `as the ${recorded[0].end} run recorded it` };
  const fromConfig = configDirection(where.workDir, where.testId, where.testType, metric.name);
  if (fromConfig !== undefined) return { higherIsBetter: fromConfig, from: `as the test's config defines it` };
  const known = knownMetric(metric.name).higherIsBetter;
  if (known !== undefined) return { higherIsBetter: known, from: 'as the serving metric of that name is defined' };
  throw new UsageError(
    `--metric ${metric.name}: whether higher or lower is better is not known (no run named by --good or --bad records it, the test's config in WORK_DIR does not define it, and it is no serving metric known by name); name a run of the history as --good or --bad`,
    'metric',
  );
}
