// Headline metrics: the few figures of a test that its users watch. The digest shows them, the
// report puts them first and the history gate judges only them unless a config or profile opts
// other metrics in. Each test type names its own (TestType.headline); this is the one place the
// core asks. The figures per type are in docs/figures.md ("Headline figures").
import type { Metric } from './metric.ts';

/**
 * What this asks of a test type: its `headline` (framework/contract/test-type.ts TestType, which
 * satisfies this). Said here by shape, as the metrics layer sits below the test-type contract.
 */
export interface HeadlineSource {
  headline?(metrics: readonly Metric[], config: Record<string, unknown>, category: string): Metric[];
}

/** The test's headline metrics, most important first ([] when its type names none). */
export function headlineMetrics(type: HeadlineSource, config: Record<string, unknown>, category: string, metrics: readonly Metric[]): Metric[] {
  return type.headline?.(metrics, config, category) ?? [];
}
