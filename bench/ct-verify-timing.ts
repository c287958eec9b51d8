// what --verify-buffers costs in the CT perftest's figures. The case of the issue,
// a 4-rank all-to-all of 8 MiB per pair on shm, run through `disagg-bench ct-perftest --ranks 4`
// with and without --verify-buffers, rounds alternating (the load of a shared machine falls on
// both); reported: kvbench's "Avg latency/iter (s)" and "Total time (s)" from the JSON report, the
// medians over the rounds, and the ratio verified / plain. Goal: verification out of the timed
// loop, so the ratio stays near 1 (<= 1.25 on this noisy 2-core machine; the issue saw 28x).
// `--bin DIR` runs another checkout's bin/disagg-bench.js (e.g. an older commit, `git archive REV |
// tar -x -C DIR` with node_modules linked in) as the baseline; run that with DISAGG_BIN=tsx, since
// the CLI bundle's cache lives in node_modules, and through a linked node_modules the ranks would
// run this checkout's bundle.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { appendResult, benchDir, printGoals, printTable, type Goal } from './lib/report.ts';
import { median } from './lib/stats.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/ct-verify-timing.ts [--rounds 5] [--iters 30] [--bin /path/to/checkout] [--smoke]
  --rounds of the CT perftest with and without --verify-buffers, --iters iterations each; --bin: the
  checkout whose bin/disagg-bench.js runs (default this one). --smoke: one round of 2 iterations, no
  figure kept.`;

const cli = benchOptions({ args: benchArgs(['--rounds', '1', '--iters', '2']), options: { rounds: { type: 'string', default: '5' }, iters: { type: 'string', default: '30' }, bin: { type: 'string' } } }, USAGE);
const { values } = cli;
const rounds = cli.wholeNumber('rounds');
const iters = cli.wholeNumber('iters');
const root = values.bin ? path.resolve(values.bin) : path.dirname(benchDir);
const bin = path.join(root, 'bin/disagg-bench.js');
const dir = mkdtempSync(path.join(tmpdir(), 'ct-verify-timing-'));
const cell = '8M';
writeFileSync(path.join(dir, 'a2a.txt'), Array.from({ length: 4 }, (_, i) => Array.from({ length: 4 }, (_, j) => (i === j ? '0' : cell)).join(' ')).join('\n') + '\n');
const config = path.join(dir, 'ct.yaml');
writeFileSync(config, `iters: ${iters}\nwarmup_iters: 2\ntraffic_pattern: { matrix_file: a2a.txt, mem_type: cpu, xfer_op: WRITE }\n`);

interface Run {
  avgLatencyPerIterS: number;
  totalS: number;
}

async function once(verify: boolean, round: number): Promise<Run> {
  const json = path.join(dir, `r-${round}-${verify}.json`);
  const args = [bin, 'ct-perftest', config, '--ranks', '4', '--backend', 'shm', '--json-output-path', json, ...(verify ? ['--verify-buffers'] : [])];
  const r = await execa('node', args, { reject: false, all: true, env: { XFER_TIMEOUT_S: '120' } });
  if (r.exitCode !== 0) throw new Error(`ct-perftest failed (${r.exitCode}):\n${r.all}`);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { avg_latency_per_iter_s: number; total_latency_s: number };
  return { avgLatencyPerIterS: report.avg_latency_per_iter_s, totalS: report.total_latency_s };
}

const plain: Run[] = [];
const verified: Run[] = [];
for (let round = 0; round < rounds; round++) {
  // alternate which goes first
  if (round % 2 === 0) {
    plain.push(await once(false, round));
    verified.push(await once(true, round));
  } else {
    verified.push(await once(true, round));
    plain.push(await once(false, round));
  }
}
rmSync(dir, { recursive: true, force: true });

const med = (runs: Run[], key: keyof Run) => median(runs.map((r) => r[key]));
const ratio = Number((med(verified, 'avgLatencyPerIterS') / med(plain, 'avgLatencyPerIterS')).toFixed(3));
printTable(`CT perftest, 4 ranks, all-to-all ${cell} per pair, shm, ${iters} iterations, ${rounds} rounds each (medians)${values.bin ? `, bin of ${root}` : ''}`, ['', 'Avg latency/iter (s)', 'Total time (s)'], [
  ['plain', med(plain, 'avgLatencyPerIterS').toFixed(6), med(plain, 'totalS').toFixed(6)],
  ['--verify-buffers', med(verified, 'avgLatencyPerIterS').toFixed(6), med(verified, 'totalS').toFixed(6)],
  ['ratio verified / plain', ratio, ''],
]);
const goals: Goal[] = [{ what: 'Avg latency/iter with --verify-buffers / without', value: ratio, limit: 1.25, atMost: true }];
printGoals(goals);
const binMode = process.env.DISAGG_BIN === 'tsx' ? 'tsx' : 'bundle'; // tsx: every rank's JavaScript, the verification included, runs slower
console.log(`results: ${appendResult('ct-verify-timing', { bin: values.bin ? root : 'this checkout', binMode, rounds, iters, plain, verified, ratio }, goals)}`);
