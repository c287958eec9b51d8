// Shared shapes of the metrics layer: what a test type declares it wants, what extractors return.

/** One measured number. */
export interface Metric {
  /** Name, e.g. SERVER_MEDIAN_TTFT: the CSV's metric_type column (its perf_metric column holds the value). */
  name: string;
  value: number;
  /** Unit spelled out: ms, us, s, GB/s (1e9 bytes/s), GiB/s, tok/s, req/s, %, fraction, count, bytes, J, W. */
  unit: string;
  higherIsBetter?: boolean;
  /** What distinguishes repeated metrics of one test: { concurrency: 8 }, { block_size: 4096 }... */
  labels: Record<string, string | number>;
  /**
   * The step the value was printed rounded to (0.01: a tool's 2 decimals), when only a rounded
   * print of it exists; absent: the value is exact (or as exact as the source keeps it). A value
   * below its step (a `0.00 GB/s`) is no measurement: charts, the digest and the gate leave it out
   * (resolution.ts).
   */
  rounded?: number;
  /**
   * The value as the tool's log printed it, where `value` was read at full precision elsewhere
   * (`source`). Upstream's CSV, which its pipeline fills from the print, gets this one.
   */
  printed?: number;
  /** Where `value` was read when not from the log's line: 'concurrency_8/result.json median_ttft_ms'. */
  source?: string;
}

/** What an extractor makes of one log text. */
export interface ExtractResult {
  metrics: Metric[];
  /** Things that make the log incomplete or suspicious (truncated block, missing marker...). */
  problems: string[];
}

/** How a test type (or a config's override) asks for metrics. */
export interface MetricSpec {
  /** Glob, relative to the test's log folder, of the log(s) to read. */
  logFile: string;
  /** Name of a registered extractor (see extractors/index.ts), e.g. 'serving', 'lm-eval', 'regex'. */
  extractor: string;
  /** Metric names to keep (or, for 'regex', the names of the capture groups in order). */
  names?: string[];
  /**
   * Metric names kept when the log has them and never missed when it does not (a line only some
   * clients print, such as the headline's total token throughput).
   */
  optionalNames?: string[];
  /** Regular expression for the 'regex' extractor; one capture group per name. */
  pattern?: string;
  /** Unit for metrics the extractor cannot name a unit for (regex). */
  unit?: string;
  higherIsBetter?: boolean;
  /** A log that is missing fails the test unless optional. */
  optional?: boolean;
}

/** ReFrame-style reference: value must lie in [ref * (1 + lower), ref * (1 + upper)]. */
export interface MetricReference {
  ref: number;
  /** Fraction of ref, usually negative or zero (e.g. -0.1 = 10% below allowed). */
  lower: number;
  /** Fraction of ref, usually positive (e.g. 0.1 = 10% above allowed); null = unbounded. */
  upper: number | null;
}
