// The registry of extractors by the name a MetricSpec gives. A new log format is a new module in
// this folder plus one line here.
import type { ExtractResult, MetricSpec } from '../metric.ts';
import { extractLmEvalMetrics } from './lm-eval.ts';
import { extractRegexMetrics } from './regex.ts';
import { extractServingMetrics } from './serving.ts';
import { extractCtPerftestMetrics } from './ct-perftest.ts';
import { extractSequentialCtPerftestMetrics } from './sequential-ct-perftest.ts';
import { extractNixlbenchMetrics } from './nixlbench.ts';
import { extractNixlEpMetrics } from './nixl-ep.ts';
import { extractLmcacheMetrics } from './lmcache.ts';
import { extractAiperfMetrics } from './aiperf.ts';
import { extractRankDevices } from './rank-devices.ts';

/**
 * Reads one log's text; never throws on bad input, reports it in `problems`. `file` is the log's
 * path relative to the test's log folder (some formats name their labels there: concurrency_<c>/).
 */
export type Extractor = (text: string, spec: MetricSpec, file?: string) => ExtractResult;

export const extractors: Readonly<Record<string, Extractor>> = {
  serving: extractServingMetrics,
  'lm-eval': extractLmEvalMetrics,
  regex: extractRegexMetrics,
  'ct-perftest': extractCtPerftestMetrics,
  'sequential-ct-perftest': extractSequentialCtPerftestMetrics,
  nixlbench: extractNixlbenchMetrics,
  'nixl-ep': extractNixlEpMetrics,
  lmcache: extractLmcacheMetrics,
  aiperf: extractAiperfMetrics,
  'rank-devices': extractRankDevices,
};

export function extractorNames(): string[] {
  return Object.keys(extractors);
}

/** The extractor registered under `name`, or undefined. */
export function getExtractor(name: string): Extractor | undefined {
  return Object.hasOwn(extractors, name) ? extractors[name] : undefined;
}
