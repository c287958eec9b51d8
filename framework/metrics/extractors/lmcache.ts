// The LMCache disaggregated-prefill tests' lines (LMCache tests/disagg/test_nixl_*.py and
// the connector's commit line), printed by LMCache and by `disagg-bench kvpipe` / `cache-engine`.
//
// Units, as upstream means them: every throughput LMCache prints is computed with 2^30 and labelled
// "GB/s" (calculate_throughput() in each test script: `gb = total_bytes / (1024 * 1024 * 1024)`;
// nixl_connector's "Pure transfer throughput": `write_size / t / 2**30`), so a bare `X GB/s` is
// X GiB/s. Every such figure is recorded the same way: NAME_GIBPS = X as printed and NAME_GBPS =
// X x 2^30 / 1e9. This project's commands print both explicitly (`X GB/s (Y GiB/s)`, GB/s = 1e9
// bytes/s), and both are then taken as printed.
//   Transfer completed in 33.7618 ms, creating the transfer: 0.0229 ms, transfer time: 18.9432 ms, wait for receiver: 14.7957 ms
//   Pure transfer throughput: 211.1577 GB/s                        per commit: _AVG/_MIN/_MAX
//   Sent 500 objects in 0.117705 seconds / Throughput: 132.75 GB/s  per {round} (channel, storage backend, channel v2)
//   Stored 128000 tokens in 0.450000 seconds / Throughput: ...      per {round} (CacheEngine test, sender)
//   Successfully retrieved all 128000 tokens in 0.5 seconds / Retrieval throughput: 35.10 GB/s   per {round} (receiver)
//   Transfer time: 0.1 seconds / Transfer throughput: 8.00 GB/s    per {round, side} (pipe, pipe v2: both sides)
//   Average throughput over 5 rounds: 8.00 GB/s                    per {side} (pipe, pipe v2)
//   Mean throughput: 70.97 ± 7.66 GB/s, Min throughput: 62.62 GB/s, Max throughput: 75.78 GB/s (CacheEngine summary)
//   Put throughput: 3.2 GB/s, Get throughput: 4.1 GB/s             (storage backend)
//   All data verified successfully! / Data verification successful / Round passed
// Precision: every throughput above is printed with 2 (pure transfer: 4) decimals. Where the same
// log holds what it was computed from, the exact figure is recorded instead: this project's
// kvpipe and cache-engine print the bytes of a round (`Generated N objects (B bytes each, ...)`,
// `...; K chunks = T bytes;`) and its time with 6 decimals (`Sent N objects in S seconds`, `Stored
// T tokens in S seconds`), so a round's THROUGHPUT is bytes / S, and the mean, std, min and max
// over the rounds follow from those. Every other printed throughput keeps its printed value and
// its step (Metric.rounded: 0.01 for `.2f`; x 2^30/1e9 where GB/s is converted from GiB/s), so a
// `0.00 GB/s` from a busy host is never taken for a measurement (metrics/resolution.ts).
// {side}: sender or receiver. A task's own log (`lmcache-task0.log` the sender, `-task1.log` the
// receiver, as the lmcache kind keeps them) says it by its name; in one log of both sides (the
// kvpipe command's) the last "Transfer time" / "Sent" (sender) or "Received" line before decides.
import type { ExtractResult, Metric, MetricSpec } from '../metric.ts';
import { maxOf, mean, minOf } from '../../../runners/common/stats.ts';
import { printedStep } from '../resolution.ts';

const NUM = '(\\d+(?:\\.\\d+)?|inf)';
/** `X GB/s` or this project's `X GB/s (Y GiB/s)`. */
const RATE = `${NUM} GB/s(?: \\(${NUM} GiB/s\\))?`;
const COMMIT = new RegExp(
  `Transfer completed in ${NUM} ms, creating the transfer: ${NUM}(?: ms)?, transfer time: ${NUM}(?: ms)?, wait for receiver: ${NUM}(?: ms)?`,
);
/** Every throughput line but the mean: the label decides the metric (longest labels first). */
const THROUGHPUT_LINE = new RegExp(
  `(Pure transfer throughput|Transfer throughput|Retrieval throughput|Put throughput|Get throughput|Min throughput|Max throughput|Average throughput over (\\d+) rounds|Throughput): ${RATE}`,
);
const PLUS_MINUS = '(?:±|Â±|\\+/-)'; // Â±: the seed's README, mis-encoded
const MEAN = new RegExp(`Mean throughput: ${NUM} ${PLUS_MINUS} ${NUM} GB/s(?: \\(${NUM} ${PLUS_MINUS} ${NUM} GiB/s\\))?`);
const SENT = new RegExp(`Sent (\\d+) objects in ${NUM} seconds`);
const STORED = new RegExp(`Stored (\\d+) tokens in ${NUM} seconds`);
const RETRIEVED = new RegExp(`retrieved all (\\d+) tokens in ${NUM} seconds`);
const TRANSFER_TIME = new RegExp(`Transfer time: ${NUM} seconds`);
const WAIT_TIME = new RegExp(`Transfer wait time: ${NUM} seconds`);
const ROUND_START = /(?:Starting round|^Round|\] Round) (\d+)\/\d+/;
/** This project's kvpipe and cache-engine: the bytes one round moves. */
const ROUND_BYTES = /Generated (\d+) objects.*?\((\d+) bytes each|\d+ chunks = (\d+) bytes/;
/** A round's time, printed with 6 decimals, is taken for exact from 100 us up (3 significant digits). */
const MIN_EXACT_SECONDS = 1e-4;
const RECEIVED_OBJECTS = /Received (\d+) (?:keys and \d+ )?objects/;
const RECEIVED_ALL = /Received all (\d+) objects/;
const VERIFIED = /All data verified successfully!|Data verification successful|Round passed/;
const MISMATCH = /(Data mismatch.*|verification failure.*|[Vv]erification failed.*)$/;

const GIB_IN_GB = 2 ** 30 / 1e9;

/** Metric name stem per throughput label. */
const STEM: Record<string, string> = {
  'Pure transfer throughput': 'PURE_THROUGHPUT',
  'Transfer throughput': 'TRANSFER_THROUGHPUT',
  'Retrieval throughput': 'RETRIEVAL_THROUGHPUT',
  'Put throughput': 'PUT_THROUGHPUT',
  'Get throughput': 'GET_THROUGHPUT',
  'Min throughput': 'MIN_THROUGHPUT',
  'Max throughput': 'MAX_THROUGHPUT',
  Throughput: 'THROUGHPUT',
};

/** A rate as printed: GB/s and GiB/s with the step each was rounded to. A bare value is LMCache's (GiB/s labelled GB/s). */
interface Rate {
  gb: number;
  gib: number;
  gbStep?: number;
  gibStep?: number;
}

function rate(value: string, gib: string | undefined): Rate {
  if (gib !== undefined) return { gb: Number(value), gib: Number(gib), gbStep: printedStep(value), gibStep: printedStep(gib) };
  const x = value === 'inf' ? Infinity : Number(value);
  const step = printedStep(value);
  return { gb: x * GIB_IN_GB, gib: x, gbStep: step === undefined ? undefined : step * GIB_IN_GB, gibStep: step };
}

/** Population std, as the tests' np.std. */
function std(values: number[]): number {
  const m = mean(values);
  return Math.sqrt(mean(values.map((v) => (v - m) ** 2)));
}

export function extractLmcacheMetrics(text: string, _spec?: MetricSpec, file?: string): ExtractResult {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  const commit = { total: [] as number[], create: [] as number[], transfer: [] as number[], wait: [] as number[] };
  const pure = { gb: [] as number[], gib: [] as number[], gbStep: undefined as number | undefined, gibStep: undefined as number | undefined };
  let round = 0;
  let announced = false; // a "Starting round k" line named the round of the next Sent/Stored line
  let retrievedRound = 0;
  let receivedRound = 0;
  const task = file === undefined ? undefined : /-task(\d+)\.log$/.exec(file)?.[1];
  const role: 'sender' | 'receiver' | undefined = task === undefined ? undefined : task === '0' ? 'sender' : 'receiver';
  let seenSide: 'sender' | 'receiver' = 'sender';
  const sideOf = () => role ?? seenSide;
  let verified = 0;
  const seen = new Set<string>();
  let roundBytes: number | undefined;
  /** The exact GB/s of each round (stored, retrieved) whose bytes and time this log holds. */
  const exactStore = new Map<number, number>();
  const exactRetrieve = new Map<number, number>();
  const exactOf = (seconds: number) => (roundBytes !== undefined && seconds >= MIN_EXACT_SECONDS ? roundBytes / seconds / 1e9 : undefined);
  const exactRate = (gb: number | undefined, printed: Rate): Rate => (gb === undefined ? printed : { gb, gib: gb / GIB_IN_GB });
  const add = (name: string, value: number, unit: string, higherIsBetter: boolean | undefined, labels: Metric['labels'] = {}, rounded?: number) => {
    // channel v2 logs its Throughput line twice (inside the send and again in main): one metric
    const key = `${name} ${JSON.stringify(labels)} ${value}`;
    if (seen.has(key)) return;
    seen.add(key);
    metrics.push({ name, value, unit, higherIsBetter, labels, ...(rounded !== undefined && { rounded }) });
  };
  const addRate = (stem: string, r: Rate, labels: Metric['labels']) => {
    add(`${stem}_GBPS`, r.gb, 'GB/s', true, labels, r.gbStep);
    add(`${stem}_GIBPS`, r.gib, 'GiB/s', true, labels, r.gibStep);
  };
  const thisRound = () => ({ round: Math.max(round, 1) });

  text.split(/\r?\n/).forEach((line, index) => {
    let m: RegExpExecArray | null;
    if ((m = COMMIT.exec(line))) {
      commit.total.push(Number(m[1]));
      commit.create.push(Number(m[2]));
      commit.transfer.push(Number(m[3]));
      commit.wait.push(Number(m[4]));
    } else if ((m = THROUGHPUT_LINE.exec(line))) {
      const label = m[2] !== undefined ? 'Average' : m[1];
      const value = rate(m[3], m[4]);
      if (label === 'Pure transfer throughput') {
        pure.gb.push(value.gb);
        pure.gib.push(value.gib);
        pure.gbStep = Math.max(pure.gbStep ?? 0, value.gbStep ?? 0) || undefined;
        pure.gibStep = Math.max(pure.gibStep ?? 0, value.gibStep ?? 0) || undefined;
      } else if (label === 'Average') addRate('AVG_THROUGHPUT', value, { rounds: Number(m[2]), side: sideOf() });
      else if (label === 'Transfer throughput') addRate('TRANSFER_THROUGHPUT', value, { ...thisRound(), side: sideOf() });
      // where the round's bytes and time are in this log: its exact throughput, not the printed one
      else if (label === 'Retrieval throughput') addRate('RETRIEVAL_THROUGHPUT', exactRate(exactRetrieve.get(Math.max(retrievedRound, 1)), value), { round: Math.max(retrievedRound, 1) });
      else if (label === 'Throughput') addRate('THROUGHPUT', exactRate(exactStore.get(thisRound().round), value), thisRound());
      else addRate(STEM[label], value, {});
    } else if ((m = MEAN.exec(line))) {
      const [mean_, spread] = [rate(m[1], m[3]), rate(m[2], m[4])];
      add('MEAN_THROUGHPUT_GBPS', mean_.gb, 'GB/s', true, {}, mean_.gbStep);
      add('MEAN_THROUGHPUT_GIBPS', mean_.gib, 'GiB/s', true, {}, mean_.gibStep);
      add('THROUGHPUT_STD_GBPS', spread.gb, 'GB/s', false, {}, spread.gbStep);
      add('THROUGHPUT_STD_GIBPS', spread.gib, 'GiB/s', false, {}, spread.gibStep);
    } else if ((m = SENT.exec(line)) || (m = STORED.exec(line))) {
      if (!announced) round++;
      announced = false;
      seenSide = 'sender';
      const sent = line.includes('Sent ');
      const seconds = Number(m[2]);
      const exact = exactOf(seconds);
      if (exact !== undefined) exactStore.set(round, exact);
      add(sent ? 'SENT_OBJECTS' : 'STORED_TOKENS', Number(m[1]), 'count', undefined, { round });
      add(sent ? 'SEND_TIME_S' : 'STORE_TIME_S', seconds, 's', false, { round });
    } else if ((m = RETRIEVED.exec(line))) {
      add('RETRIEVED_TOKENS', Number(m[1]), 'count', undefined, { round: ++retrievedRound });
      const exact = exactOf(Number(m[2]));
      if (exact !== undefined) exactRetrieve.set(retrievedRound, exact);
      add('RETRIEVE_TIME_S', Number(m[2]), 's', false, { round: retrievedRound });
    } else if ((m = TRANSFER_TIME.exec(line))) {
      seenSide = 'sender';
      add('TRANSFER_TIME_S', Number(m[1]), 's', false, { ...thisRound(), side: sideOf() });
    } else if ((m = WAIT_TIME.exec(line))) {
      seenSide = 'receiver';
      add('TRANSFER_WAIT_TIME_S', Number(m[1]), 's', false, thisRound());
    } else if ((m = ROUND_BYTES.exec(line))) {
      roundBytes = m[3] !== undefined ? Number(m[3]) : Number(m[1]) * Number(m[2]);
    } else if ((m = ROUND_START.exec(line))) {
      round = Number(m[1]);
      announced = true;
    } else if ((m = RECEIVED_ALL.exec(line))) {
      seenSide = 'receiver';
      add('RECEIVED_OBJECTS', Number(m[1]), 'count', undefined, { round: ++receivedRound });
    } else if (RECEIVED_OBJECTS.test(line)) {
      seenSide = 'receiver';
    } else if (VERIFIED.test(line)) {
      verified++;
    } else if ((m = MISMATCH.exec(line))) {
      problems.push(`line ${index + 1}: ${m[1].trim()}`);
    }
  });

  if (commit.total.length > 0) {
    add('COMMITS', commit.total.length, 'count', undefined);
    add('COMMIT_TIME_MS_AVG', mean(commit.total), 'ms', false);
    add('COMMIT_CREATE_MS_AVG', mean(commit.create), 'ms', false);
    add('COMMIT_TRANSFER_MS_AVG', mean(commit.transfer), 'ms', false);
    add('COMMIT_WAIT_MS_AVG', mean(commit.wait), 'ms', false);
  }
  for (const [values, name, unit, step] of [
    [pure.gb, 'PURE_THROUGHPUT_GBPS', 'GB/s', pure.gbStep],
    [pure.gib, 'PURE_THROUGHPUT_GIBPS', 'GiB/s', pure.gibStep],
  ] as const) {
    if (values.length === 0) continue;
    add(`${name}_AVG`, mean(values), unit, true, {}, step);
    add(`${name}_MIN`, minOf(values), unit, true, {}, step);
    add(`${name}_MAX`, maxOf(values), unit, true, {}, step);
  }
  // Every round's throughput exact: the summary over the rounds is recomputed from them.
  const rounds = metrics.filter((x) => x.name === 'THROUGHPUT_GBPS');
  if (rounds.length > 0 && rounds.every((x) => x.rounded === undefined)) exactSummary(metrics, rounds.map((x) => x.value));
  if (verified > 0) add('VERIFIED_ROUNDS', verified, 'count', true);
  if (metrics.length === 0) problems.push('no LMCache transfer lines (Transfer completed / Sent N objects / Throughput / Mean throughput) in the log');
  return { metrics, problems };
}

/** The summary lines' figures (mean, std, min, max over the rounds) from the rounds' exact throughputs. */
function exactSummary(metrics: Metric[], roundsGb: number[]): void {
  const exact: Record<string, number> = {
    MEAN_THROUGHPUT_GBPS: mean(roundsGb),
    THROUGHPUT_STD_GBPS: std(roundsGb),
    MIN_THROUGHPUT_GBPS: minOf(roundsGb),
    MAX_THROUGHPUT_GBPS: maxOf(roundsGb),
  };
  for (const [name, gb] of Object.entries(exact)) exact[name.replace('_GBPS', '_GIBPS')] = gb / GIB_IN_GB;
  for (const metric of metrics) {
    if (!(metric.name in exact) || Object.keys(metric.labels).length > 0) continue;
    metric.value = exact[metric.name];
    delete metric.rounded;
  }
}
