// Headline metrics: the few figures of a test that its users watch. The digest shows them, the
// report puts them first and the history gate judges only them unless a config or profile opts
// other metrics in. Each test type names its own (TestType.headline); this is the one place the
// core asks. It takes the type by shape, since metrics sits below the test-type contract.
import type { Metric } from './metric.ts';

/** What headlineMetrics needs of a test type: TestType.headline. */
export interface HeadlineSource {
  headline?(metrics: readonly Metric[], config: Record<string, unknown>, category: string): Metric[];
}

/** The test's headline metrics, most important first ([] when its type names none). */
export function headlineMetrics(type: HeadlineSource, config: Record<string, unknown>, category: string, metrics: readonly Metric[]): Metric[] {
  return type.headline?.(metrics, config, category) ?? [];
}

