// The LMCache disaggregated-prefill tests' lines (seed 004), printed by LMCache's tests and by
// `disagg-bench kvpipe`. Units are made explicit: LMCache's `Pure transfer throughput: X GB/s`
// divides by 2^30, so a bare value is GiB/s (its GB/s value is derived); kvpipe prints both,
// `X GB/s (Y GiB/s)`, and both are taken as printed.
//   Transfer completed in 33.7618 ms, creating the transfer: 0.0229 ms, transfer time: 18.9432 ms, wait for receiver: 14.7957 ms
//   Pure transfer throughput: 211.1577 GB/s
//   Sent 500 objects in 0.117705 seconds          Throughput: 132.75 GB/s
//   Mean throughput: 70.97 ± 7.66 GB/s           All data verified successfully!
//   Stored 128000 tokens in 0.45 seconds          Retrieval throughput: 35.1 GB/s   (the CacheEngine test)
// Per-commit figures become avg/min/max over the commits; per-round ones carry {round}.
import type { ExtractResult, Metric } from '../metric.ts';
import { maxOf, mean, minOf } from '../../../runners/xfer/benches/common/stats.ts';

const NUM = '(\\d+(?:\\.\\d+)?)';
const COMMIT = new RegExp(
  `Transfer completed in ${NUM} ms, creating the transfer: ${NUM}(?: ms)?, transfer time: ${NUM}(?: ms)?, wait for receiver: ${NUM}(?: ms)?`,
);
const PURE = new RegExp(`Pure transfer throughput: ${NUM} GB/s(?: \\(${NUM} GiB/s\\))?`);
const SENT = new RegExp(`Sent (\\d+) objects in ${NUM} seconds`);
/** The CacheEngine test's store() and retrieve(). */
const STORED = new RegExp(`Stored (\\d+) tokens in ${NUM} seconds`);
const RETRIEVAL = new RegExp(`Retrieval throughput: ${NUM} GB/s(?: \\(${NUM} GiB/s\\))?`);
const THROUGHPUT = new RegExp(`\\bThroughput: ${NUM} GB/s(?: \\(${NUM} GiB/s\\))?`);
const MEAN = new RegExp(`Mean throughput: ${NUM} (?:±|Â±|\\+/-) ${NUM} GB/s`);
const RECEIVED_ALL = /Received all (\d+) objects/;
const VERIFIED = /All data verified successfully!|Data verification successful/;
const MISMATCH = /(Data mismatch.*|verification failure.*|[Vv]erification failed.*)$/;

const GIB_TO_GB = 2 ** 30 / 1e9;

export function extractLmcacheMetrics(text: string): ExtractResult {
  const metrics: Metric[] = [];
  const problems: string[] = [];
  const commit = { total: [] as number[], create: [] as number[], transfer: [] as number[], wait: [] as number[] };
  const pureGb: number[] = [];
  const pureGib: number[] = [];
  let round = 0;
  let receivedRound = 0;
  let retrievedRound = 0;
  let verified = 0;
  const add = (name: string, value: number, unit: string, higherIsBetter: boolean | undefined, labels: Metric['labels'] = {}) =>
    metrics.push({ name, value, unit, higherIsBetter, labels });

  text.split(/\r?\n/).forEach((line, index) => {
    let m: RegExpExecArray | null;
    if ((m = COMMIT.exec(line))) {
      commit.total.push(Number(m[1]));
      commit.create.push(Number(m[2]));
      commit.transfer.push(Number(m[3]));
      commit.wait.push(Number(m[4]));
    } else if ((m = PURE.exec(line))) {
      // without the explicit GiB/s value, the number is LMCache's bytes / 2^30 labelled GB/s
      const gib = m[2] !== undefined ? Number(m[2]) : Number(m[1]);
      pureGib.push(gib);
      pureGb.push(m[2] !== undefined ? Number(m[1]) : gib * GIB_TO_GB);
    } else if ((m = SENT.exec(line))) {
      round++;
      add('SENT_OBJECTS', Number(m[1]), 'count', undefined, { round });
      add('SEND_TIME_S', Number(m[2]), 's', false, { round });
    } else if ((m = STORED.exec(line))) {
      round++;
      add('STORED_TOKENS', Number(m[1]), 'count', undefined, { round });
      add('STORE_TIME_S', Number(m[2]), 's', false, { round });
    } else if ((m = RETRIEVAL.exec(line))) {
      add('RETRIEVAL_THROUGHPUT_GBPS', Number(m[1]), 'GB/s', true, { round: ++retrievedRound });
      if (m[2] !== undefined) add('RETRIEVAL_THROUGHPUT_GIBPS', Number(m[2]), 'GiB/s', true, { round: retrievedRound });
    } else if ((m = MEAN.exec(line))) {
      add('MEAN_THROUGHPUT_GBPS', Number(m[1]), 'GB/s', true);
      add('THROUGHPUT_STD_GBPS', Number(m[2]), 'GB/s', false);
    } else if ((m = THROUGHPUT.exec(line))) {
      const labels = { round: Math.max(round, 1) };
      add('THROUGHPUT_GBPS', Number(m[1]), 'GB/s', true, labels);
      if (m[2] !== undefined) add('THROUGHPUT_GIBPS', Number(m[2]), 'GiB/s', true, labels);
    } else if ((m = RECEIVED_ALL.exec(line))) {
      add('RECEIVED_OBJECTS', Number(m[1]), 'count', undefined, { round: ++receivedRound });
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
    [pureGb, 'PURE_THROUGHPUT_GBPS', 'GB/s'],
    [pureGib, 'PURE_THROUGHPUT_GIBPS', 'GiB/s'],
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
