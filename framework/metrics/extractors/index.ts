// The registry of extractors by the name a MetricSpec gives. A new log format is a new module in
// this folder plus one line here, or a registerExtractor call (an extension from outside the
// checkout: framework/config/extensions.ts).
import type { ExtractResult, MetricSpec } from '../metric.ts';
import { InputError } from '../../../runners/common/errors.ts';
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
import { exactServingFigures } from './serving-saved-result.ts';
import { extractKvHandoverMetrics } from './kv-handover.ts';

/**
 * Reads one log's text; never throws on bad input, reports it in `problems`. `file` is the log's
 * path relative to the test's log folder (some formats name their labels there: concurrency_<c>/).
 */
export type Extractor = (text: string, spec: MetricSpec, file?: string) => ExtractResult;

const extractors: Record<string, Extractor> = {
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
  'kv-handover': extractKvHandoverMetrics,
};

/**
 * What an extractor's result becomes once files beside the log are read (the figures a tool printed
 * rounded, at the full precision it saved them): never throws, says what it could not use in
 * `problems`. `file` is the log's path relative to `logDir`.
 */
export type Completer = (result: ExtractResult, logDir: string, file: string) => Promise<ExtractResult>;

export const completers: Readonly<Record<string, Completer>> = {
  serving: exactServingFigures,
};

const EXTRACTOR_NAME = /^[a-z][a-z0-9-]*$/;

/** Registers an extractor under a new name; a registered name or a malformed one is refused. */
export function registerExtractor(name: string, extractor: Extractor): void {
  if (!EXTRACTOR_NAME.test(name)) throw new InputError(`extractor name ${JSON.stringify(name)}: expected lower-case letters, digits and dashes`);
  const known = extractors[name];
  if (known && known !== extractor) throw new InputError(`an extractor named ${name} is registered already`);
  extractors[name] = extractor;
}

export function extractorNames(): string[] {
  return Object.keys(extractors);
}

/** The extractor registered under `name`, or undefined. */
export function getExtractor(name: string): Extractor | undefined {
  return Object.hasOwn(extractors, name) ? extractors[name] : undefined;
}

/** The completer registered for extractor `name`, or undefined. */
export function getCompleter(name: string): Completer | undefined {
  return Object.hasOwn(completers, name) ? completers[name] : undefined;
}
