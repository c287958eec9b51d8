// Headline metrics: the few figures of a test that its users watch. The digest shows them, the
// report puts them first and the history gate judges only them unless a config or profile opts
// other metrics in. Each test type names its own (TestType.headline); this is the one place the
// core asks.
import type { TestType } from '../types/test-type.ts';
import type { Metric } from './metric.ts';

/** The test's headline metrics, most important first ([] when its type names none). */
export function headlineMetrics(type: TestType, config: Record<string, unknown>, category: string, metrics: readonly Metric[]): Metric[] {
  return type.headline?.(metrics, config, category) ?? [];
}

