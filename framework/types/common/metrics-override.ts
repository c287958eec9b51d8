// A config's own metrics (`benchmark.metrics`): a regex over one log file, read by the `regex`
// extractor (framework/metrics/extractors/regex.ts). Every test type that offers it takes this shape.

export interface MetricsOverride {
  log_file: string;
  extractor_pattern: string;
  metric_names: string[];
  unit?: string;
  higher_is_better?: boolean;
}
