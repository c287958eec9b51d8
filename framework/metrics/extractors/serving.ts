// Reads the serving client's output (benchmark_serving, or our serve-bench printing the same block
// through serving-format.ts) from a 6_bench.log: one result block per concurrency, tied to the job
// script's `Benchmarking with concurrency <c> ... <n> prompts` / `Benchmark with concurrency <c> done`
// markers. Every numeric line of a block becomes a SERVER_* metric labelled { concurrency }.
// Only complete blocks yield metrics; everything suspicious is a problem (line numbers are 1-based).
// A decimal figure is marked with the step it was printed to (Metric.rounded) until the client's
// result.json gives its exact value (serving-saved-result.ts).
// Every block layout benchmark_serving has printed is read (fixtures per version in
// tests/fixtures/logs/serving/versions/): failed requests come from `Failed requests:`, else from
// `Total failed requests: N` (the !FAILED REQUESTS! banner inside the block, or the line upstream's
// SA script prints after it), else Total - Successful requests, else 0 (nothing printed = none failed).
// Upstream's warm-ups (framework/types/serving/job/warmup.ts) print full result blocks too: the UCX warm-up's
// between `warming up ucx connections with small requests... N` and `UCX warmup done`, the
// exact-shape warm-up's between `Warming up exact request shape with concurrency c ... n prompts`
// and `Exact-shape warmup with concurrency c done`. Their numbers are never recorded; a failed
// request in an exact-shape warm-up is a problem (upstream's run_benchmark.sh stops the job there).
// (Upstream's own parser, a regex from the first `Median TTFT` to the first `Benchmark with
// concurrency N done`, takes the warm-up's numbers where the warm-up printed the same lines.)
import type { ExtractResult, Metric, MetricSpec } from '../metric.ts';
import { printedStep } from '../resolution.ts';
import { SERVING_STAT_WORDS, SERVING_SUMMARY_FIELDS } from '../../../runners/common/serving-format.ts';

const START_MARKER = /^Benchmarking with concurrency (\d+)(?: \.\.\. (\d+) prompts)?/;
const DONE_MARKER = /^Benchmark with concurrency (\d+) done/;
const BANNER = /^=+ Serving Benchmark Result =+\s*$/;
const CLOSING = /^={10,}\s*$/;
const FAILED_BANNER = /^=+!(FAILED REQUESTS|CHECK LOG FOR ERRORS)!=+\s*$/;
const TOTAL_FAILED = /^Total failed requests:\s*(\d+)\s*$/;
/** `Total failed requests: N` (the !FAILED REQUESTS! banner, the SA script's line), as its own metric. */
export const TOTAL_FAILED_METRIC = 'SERVER_TOTAL_FAILED_REQUESTS';
const MAX_CONCURRENCY = /^Maximum request concurrency:\s*(\d+)\s*$/;
const UCX_WARMUP = /^warming up ucx connections with small requests\.\.\. (\d+)/;
const UCX_WARMUP_DONE = /^UCX warmup done/;
const EXACT_WARMUP = /^Warming up exact request shape with concurrency (\d+) \.\.\. (\d+) prompts/;
const EXACT_WARMUP_DONE = /^Exact-shape warmup with concurrency (\d+) done/;
const SECTION = /^-{3,}.*-{3,}\s*$/;
// A `label: value` line of the block; the value as Python prints numbers (validated below).
const FIELD = /^(\S.*?:)\s+([-+]?[0-9.]+(?:[eE][-+]?\d+)?|-?nan|-?inf)\s*$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const STAT = new RegExp(`^(${Object.keys(SERVING_STAT_WORDS).join('|')}|P(\\d+(?:\\.\\d+)?)) (.+?)(?: \\(([^)]+)\\))?:$`);

interface Field {
  label: string;
  raw: string;
  line: number;
}

interface Block {
  line: number;
  fields: Field[];
  complete: boolean;
  /** From `Total failed requests: N` inside the block, just before it, or after it in its run. */
  totalFailed?: number;
  /** `Maximum request concurrency: N` printed before the block (fallback when no marker). */
  maxConcurrency?: number;
}

interface Run {
  concurrency: number;
  prompts?: number;
  line: number;
  blocks: Block[];
  done: boolean;
}

/** A warm-up section: its blocks are read (for failed requests) and never recorded. */
interface Warmup {
  kind: 'ucx' | 'exact';
  concurrency?: number;
  line: number;
  blocks: Block[];
}

/** One complete result block and the concurrency it belongs to. */
export interface ServingBlockResult {
  concurrency: number;
  /** Line of the block's banner. */
  line: number;
  metrics: Metric[];
}

export interface ServingParse {
  results: ServingBlockResult[];
  problems: string[];
}

/** Lines split on \n, \r\n and the bare \r of progress bars. */
function splitLines(text: string): { lines: string[]; lineNumbers: number[] } {
  const lines: string[] = [];
  const lineNumbers: number[] = [];
  text.split('\n').forEach((physical, index) => {
    for (const part of physical.split('\r')) {
      lines.push(part);
      lineNumbers.push(index + 1);
    }
  });
  return { lines, lineNumbers };
}

function slug(text: string): string {
  return text.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/** Metric name, unit and direction for a block label (known labels first, then a derived name). */
export function servingMetricFor(label: string): Omit<Metric, 'value' | 'labels'> {
  const known = SERVING_SUMMARY_FIELDS.find((f) => f.label === label);
  if (known) return { name: known.metric, unit: known.unit, higherIsBetter: known.higherIsBetter };
  const stat = STAT.exec(label);
  if (stat) {
    const word = stat[2] !== undefined ? `P${stat[2].replace('.', '_')}` : SERVING_STAT_WORDS[stat[1]];
    const unit = stat[4] ?? 'count';
    // Latencies (ms) are better low; unitless statistics such as decoded tokens per iteration high.
    return { name: `SERVER_${word}_${slug(stat[3])}`, unit, higherIsBetter: unit !== 'ms' };
  }
  const unitMatch = /\(([^)]+)\):$/.exec(label);
  return { name: `SERVER_${slug(label.replace(/\([^)]*\):$|:$/, ''))}`, unit: unitMatch?.[1] ?? 'count' };
}

function blockMetrics(block: Block, concurrency: number, problems: string[]): Metric[] {
  const metrics: Metric[] = [];
  for (const field of block.fields) {
    const meta = servingMetricFor(field.label);
    const value = Number(field.raw);
    if (!NUMBER.test(field.raw) || !Number.isFinite(value)) {
      problems.push(`line ${field.line}: concurrency ${concurrency}: ${meta.name} is '${field.raw}', not a number`);
      continue;
    }
    // A decimal is printed rounded (`{:<10.2f}`: 0.01; energy `.4f`); a whole count is exact.
    // concurrency_<c>/result.json may hold the exact value (serving-saved-result.ts).
    const rounded = field.raw.includes('.') ? printedStep(field.raw) : undefined;
    metrics.push({ ...meta, value, labels: { concurrency }, ...(rounded !== undefined && { rounded }) });
  }
  // The log's own line, recorded under the name releases have recorded it by, whatever decides the verdict.
  if (block.totalFailed !== undefined) metrics.push({ name: TOTAL_FAILED_METRIC, unit: 'count', higherIsBetter: false, value: block.totalFailed, labels: { concurrency } });
  if (!metrics.some((m) => m.name === 'SERVER_FAILED_REQUESTS')) {
    const total = metrics.find((m) => m.name === 'SERVER_TOTAL_REQUESTS')?.value;
    const successful = metrics.find((m) => m.name === 'SERVER_SUCCESSFUL_REQUESTS')?.value;
    const value = block.totalFailed ?? (total !== undefined && successful !== undefined ? total - successful : 0);
    const failed = SERVING_SUMMARY_FIELDS.find((f) => f.key === 'failedRequests')!;
    metrics.push({ name: failed.metric, unit: failed.unit, higherIsBetter: failed.higherIsBetter, value, labels: { concurrency } });
  }
  return metrics;
}

/** Parses a whole log into complete per-concurrency results and the problems found. */
export function parseServingLog(text: string): ServingParse {
  const problems: string[] = [];
  const results: ServingBlockResult[] = [];
  const { lines, lineNumbers } = splitLines(text);
  // A last line without its newline was cut off; its content cannot be trusted.
  const cutLine = text.length > 0 && !text.endsWith('\n') ? lines.length - 1 : -1;

  let run: Run | undefined;
  let warmup: Warmup | undefined;
  let block: Block | undefined;
  let pendingFailed: number | undefined;
  let maxConcurrency: number | undefined;

  const finishRun = (r: Run) => {
    const complete = r.blocks.filter((b) => b.complete);
    for (const b of r.blocks.filter((b) => !b.complete)) {
      problems.push(`line ${b.line}: concurrency ${r.concurrency}: result block is truncated (no closing '=' line); its values are ignored`);
    }
    if (r.blocks.length === 0) {
      problems.push(`line ${r.line}: concurrency ${r.concurrency}: no 'Serving Benchmark Result' block (the client failed or was killed)`);
    }
    if (complete.length > 1) {
      problems.push(`line ${r.line}: concurrency ${r.concurrency}: ${complete.length} result blocks under one marker; the last one is used`);
    }
    if (!r.done) {
      problems.push(`line ${r.line}: concurrency ${r.concurrency}: no 'Benchmark with concurrency ${r.concurrency} done' marker`);
    }
    const last = complete[complete.length - 1];
    if (!last) return;
    const metrics = blockMetrics(last, r.concurrency, problems);
    const total = metrics.find((m) => m.name === 'SERVER_TOTAL_REQUESTS');
    if (total && r.prompts !== undefined && total.value !== r.prompts) {
      problems.push(`line ${last.line}: concurrency ${r.concurrency}: ${r.prompts} prompts announced but ${total.value} requests reported`);
    }
    results.push({ concurrency: r.concurrency, line: last.line, metrics });
  };

  const doneLine = (w: Warmup) => (w.kind === 'ucx' ? 'UCX warmup done' : `Exact-shape warmup with concurrency ${w.concurrency} done`);
  /** Ends a warm-up section; `cut` when its done line never came (the warm-up client failed or was killed). */
  const finishWarmup = (w: Warmup, cut: boolean) => {
    warmup = undefined;
    pendingFailed = undefined;
    if (cut) problems.push(`line ${w.line}: the warm-up started here has no '${doneLine(w)}' line (the warm-up client failed or was killed)`);
    const last = w.blocks.filter((b) => b.complete).pop();
    if (w.kind !== 'exact' || !last) return;
    const failed = blockMetrics(last, w.concurrency!, []).find((m) => m.name === 'SERVER_FAILED_REQUESTS')?.value ?? 0;
    if (failed > 0) {
      problems.push(`line ${last.line}: exact-shape warm-up at concurrency ${w.concurrency}: ${failed} failed request${failed === 1 ? '' : 's'} (upstream's run_benchmark.sh stops the job there)`);
    }
  };

  const finishBlock = (b: Block) => {
    block = undefined;
    if (warmup) {
      warmup.blocks.push(b);
      return;
    }
    if (run) {
      run.blocks.push(b);
      return;
    }
    const hint = b.maxConcurrency;
    if (!b.complete) {
      problems.push(`line ${b.line}: result block outside any 'Benchmarking with concurrency' marker is truncated; its values are ignored`);
    } else if (hint === undefined) {
      problems.push(`line ${b.line}: result block has no 'Benchmarking with concurrency' marker and no 'Maximum request concurrency' line; its values are ignored`);
    } else {
      problems.push(`line ${b.line}: result block has no 'Benchmarking with concurrency' marker; labelled concurrency ${hint} from 'Maximum request concurrency'`);
      results.push({ concurrency: hint, line: b.line, metrics: blockMetrics(b, hint, problems) });
    }
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const lineNo = lineNumbers[i];
    if (i === cutLine) {
      if (block || START_MARKER.test(line) || DONE_MARKER.test(line)) {
        problems.push(`line ${lineNo}: log ends in the middle of a line ('${line.trim()}'); the log is truncated`);
      }
      break;
    }
    if (block) {
      if (CLOSING.test(line)) {
        block.complete = true;
        finishBlock(block);
        continue;
      }
      const failed = TOTAL_FAILED.exec(line);
      if (failed) {
        block.totalFailed = Number(failed[1]);
        continue;
      }
      if (FAILED_BANNER.test(line) || SECTION.test(line)) continue;
      const field = FIELD.exec(line);
      if (field && !START_MARKER.test(line) && !DONE_MARKER.test(line)) {
        block.fields.push({ label: field[1], raw: field[2], line: lineNo });
        continue;
      }
      const marker = [BANNER, START_MARKER, DONE_MARKER, UCX_WARMUP, UCX_WARMUP_DONE, EXACT_WARMUP, EXACT_WARMUP_DONE].some((m) => m.test(line));
      if (marker) {
        finishBlock(block); // cut short: the next marker arrived before the closing line
      } else {
        continue; // a stray line (warning, another process) inside the block
      }
    }

    const ucx = UCX_WARMUP.exec(line);
    const exact = EXACT_WARMUP.exec(line);
    if (ucx || exact) {
      if (run) finishRun(run);
      run = undefined;
      if (warmup) finishWarmup(warmup, true);
      warmup = { kind: ucx ? 'ucx' : 'exact', concurrency: exact ? Number(exact[1]) : undefined, line: lineNo, blocks: [] };
      maxConcurrency = undefined;
      continue;
    }
    if (warmup && (UCX_WARMUP_DONE.test(line) || EXACT_WARMUP_DONE.test(line))) {
      finishWarmup(warmup, false);
      continue;
    }
    const start = START_MARKER.exec(line);
    if (start) {
      if (warmup) finishWarmup(warmup, true);
      if (run) finishRun(run);
      run = { concurrency: Number(start[1]), prompts: start[2] ? Number(start[2]) : undefined, line: lineNo, blocks: [], done: false };
      pendingFailed = undefined;
      maxConcurrency = undefined;
      continue;
    }
    const done = DONE_MARKER.exec(line);
    if (done) {
      const c = Number(done[1]);
      if (!run) {
        problems.push(`line ${lineNo}: 'Benchmark with concurrency ${c} done' without its 'Benchmarking with concurrency ${c}' marker`);
      } else {
        if (run.concurrency !== c) {
          problems.push(`line ${lineNo}: done marker for concurrency ${c} closes the run started for concurrency ${run.concurrency} at line ${run.line}`);
        }
        run.done = true;
        finishRun(run);
        run = undefined;
      }
      continue;
    }
    if (BANNER.test(line)) {
      block = { line: lineNo, fields: [], complete: false, totalFailed: pendingFailed, maxConcurrency };
      pendingFailed = undefined;
      continue;
    }
    const failed = TOTAL_FAILED.exec(line);
    if (failed) {
      // After the run's block (upstream's SA script prints it from result.json), else before the next.
      const last = run?.blocks[run.blocks.length - 1];
      if (last?.complete && last.totalFailed === undefined) last.totalFailed = Number(failed[1]);
      else pendingFailed = Number(failed[1]);
    }
    const max = MAX_CONCURRENCY.exec(line);
    if (max) maxConcurrency = Number(max[1]);
  }
  if (block) finishBlock(block);
  if (warmup) finishWarmup(warmup, true);
  if (run) finishRun(run);

  const seen = new Map<number, number>();
  for (const r of results) {
    const first = seen.get(r.concurrency);
    if (first !== undefined) problems.push(`line ${r.line}: concurrency ${r.concurrency} has a second result (first at line ${first}); both are kept`);
    else seen.set(r.concurrency, r.line);
  }
  return { results, problems };
}

/** The registered 'serving' extractor. */
export function extractServingMetrics(text: string, _spec?: MetricSpec): ExtractResult {
  const { results, problems } = parseServingLog(text);
  return { metrics: results.flatMap((r) => r.metrics), problems };
}
