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
// {side}: sender or receiver. A task's own log (`lmcache-task0.log` the sender, `-task1.log` the
// receiver, as the lmcache kind keeps them) says it by its name; in one log of both sides (the
// kvpipe command's) the last "Transfer time" / "Sent" (sender) or "Received" line before decides.
import type { ExtractResult, Metric, MetricSpec } from '../metric.ts';
import { maxOf, mean, minOf } from '../../../runners/common/stats.ts';

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

/** A rate as printed: [GB/s, GiB/s]. A bare value is LMCache's (GiB/s labelled GB/s). */
function rate(value: string, gib: string | undefined): [number, number] {
  if (gib !== undefined) return [Number(value), Number(gib)];
  const x = value === 'inf' ? Infinity : Number(value);
  return [x * GIB_IN_GB, x];
}

export function extractLmcacheMetrics(text: string, _spec?: MetricSpec, file?: string): ExtractResult {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  const commit = { total: [] as number[], create: [] as number[], transfer: [] as number[], wait: [] as number[] };
  const pure = { gb: [] as number[], gib: [] as number[] };
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
  const add = (name: string, value: number, unit: string, higherIsBetter: boolean | undefined, labels: Metric['labels'] = {}) => {
    // channel v2 logs its Throughput line twice (inside the send and again in main): one metric
    const key = `${name} ${JSON.stringify(labels)} ${value}`;
    if (seen.has(key)) return;
    seen.add(key);
    metrics.push({ name, value, unit, higherIsBetter, labels });
  };
  const addRate = (stem: string, [gb, gib]: [number, number], labels: Metric['labels']) => {
    add(`${stem}_GBPS`, gb, 'GB/s', true, labels);
    add(`${stem}_GIBPS`, gib, 'GiB/s', true, labels);
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
        pure.gb.push(value[0]);
        pure.gib.push(value[1]);
      } else if (label === 'Average') addRate('AVG_THROUGHPUT', value, { rounds: Number(m[2]), side: sideOf() });
      else if (label === 'Transfer throughput') addRate('TRANSFER_THROUGHPUT', value, { ...thisRound(), side: sideOf() });
      else if (label === 'Retrieval throughput') addRate('RETRIEVAL_THROUGHPUT', value, { round: Math.max(retrievedRound, 1) });
      else if (label === 'Throughput') addRate('THROUGHPUT', value, thisRound());
      else addRate(STEM[label], value, {});
    } else if ((m = MEAN.exec(line))) {
      const [mean_, std] = [rate(m[1], m[3]), rate(m[2], m[4])];
      add('MEAN_THROUGHPUT_GBPS', mean_[0], 'GB/s', true);
      add('MEAN_THROUGHPUT_GIBPS', mean_[1], 'GiB/s', true);
      add('THROUGHPUT_STD_GBPS', std[0], 'GB/s', false);
      add('THROUGHPUT_STD_GIBPS', std[1], 'GiB/s', false);
    } else if ((m = SENT.exec(line)) || (m = STORED.exec(line))) {
      if (!announced) round++;
      announced = false;
      seenSide = 'sender';
      const sent = line.includes('Sent ');
      add(sent ? 'SENT_OBJECTS' : 'STORED_TOKENS', Number(m[1]), 'count', undefined, { round });
      add(sent ? 'SEND_TIME_S' : 'STORE_TIME_S', Number(m[2]), 's', false, { round });
    } else if ((m = RETRIEVED.exec(line))) {
      add('RETRIEVED_TOKENS', Number(m[1]), 'count', undefined, { round: ++retrievedRound });
      add('RETRIEVE_TIME_S', Number(m[2]), 's', false, { round: retrievedRound });
    } else if ((m = TRANSFER_TIME.exec(line))) {
      seenSide = 'sender';
      add('TRANSFER_TIME_S', Number(m[1]), 's', false, { ...thisRound(), side: sideOf() });
    } else if ((m = WAIT_TIME.exec(line))) {
      seenSide = 'receiver';
      add('TRANSFER_WAIT_TIME_S', Number(m[1]), 's', false, thisRound());
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
  for (const [values, name, unit] of [
    [pure.gb, 'PURE_THROUGHPUT_GBPS', 'GB/s'],
    [pure.gib, 'PURE_THROUGHPUT_GIBPS', 'GiB/s'],
  ] as const) {
    if (values.length === 0) continue;
    add(`${name}_AVG`, mean(values), unit, true);
    add(`${name}_MIN`, minOf(values), unit, true);
    add(`${name}_MAX`, maxOf(values), unit, true);
  }
  if (verified > 0) add('VERIFIED_ROUNDS', verified, 'count', true);
  if (metrics.length === 0) problems.push('no LMCache transfer lines (Transfer completed / Sent N objects / Throughput / Mean throughput) in the log');
  return { metrics, problems };
}
