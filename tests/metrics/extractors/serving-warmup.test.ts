// upstream's warm-ups print full result blocks into 6_bench.log (run_benchmark.sh:
// the UCX warm-up before the first `Benchmarking with concurrency`, newer versions an exact-shape
// warm-up before each one). Every golden log (tests/fixtures/logs/serving/golden/: our own logs in
// upstream's format, each benchmark_serving layout with its warm-up, one with exact-shape warm-ups)
// parses without a problem, and only the measured blocks' numbers come out: each equals the
// <name>.expected.json value read from the measured block, and no warm-up latency (8000 ms and up
// in these fixtures) is ever recorded.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseServingLog } from '../../../framework/metrics/extractors/serving.ts';

const golden = path.resolve(import.meta.dirname, '../../fixtures/logs/serving/golden');
const names = readdirSync(golden).filter((f) => f.endsWith('.log')).map((f) => f.replace(/\.log$/, ''));
const read = (name: string) => readFileSync(path.join(golden, `${name}.log`), 'utf8');

describe('logs with upstream\'s warm-up blocks', () => {
  it('the golden logs are all here', () => {
    expect(names.sort()).toEqual([
      'exact-warmup', 'sa-bench-serving', 'total-and-successful-only', 'v1-successful-only', 'v2-user-throughput-failed-banner',
      'v3-total-and-failed-lines', 'v4-std-min-max-decoded-tokens', 'v5-goodput-energy',
    ]);
  });

  for (const name of names) {
    it(`${name}: no problem, the measured values only`, () => {
      const expected: Record<string, Record<string, number>> = JSON.parse(readFileSync(path.join(golden, `${name}.expected.json`), 'utf8'));
      const { results, problems } = parseServingLog(read(name));
      expect(problems).toEqual([]);
      expect(results.map((r) => r.concurrency)).toEqual(Object.keys(expected).map(Number).sort((a, b) => a - b));
      for (const r of results) {
        const value = (metric: string) => r.metrics.find((m) => m.name === metric)?.value;
        for (const [metric, v] of Object.entries(expected[r.concurrency])) expect(value(metric), `${metric}@${r.concurrency}`).toBe(v);
        // Nothing of a warm-up block: its latencies are 8000 ms and up here, the measured ones far below.
        expect(r.metrics.filter((m) => m.unit === 'ms' && m.value >= 8000).map((m) => m.name)).toEqual([]);
      }
    });
  }

  it('an exact-shape warm-up with a failed request is a problem (upstream\'s run_benchmark.sh stops there); its numbers still are not recorded', () => {
    const text = read('exact-warmup').replace(
      /(Warming up exact request shape with concurrency 16 \.\.\. 16 prompts[\s\S]*?)Successful requests: +16 *\nFailed requests: +0 *\n/,
      (_, head) => `${head}Successful requests:                     14        \nFailed requests:                         2         \n`,
    );
    const { results, problems } = parseServingLog(text);
    expect(problems).toEqual([expect.stringMatching(/^line \d+: exact-shape warm-up at concurrency 16: 2 failed requests \(upstream's run_benchmark\.sh stops the job there\)$/)]);
    expect(results.map((r) => r.concurrency)).toEqual([8, 16]);
  });

  it('a warm-up without its done line (its client failed) is a problem, and the run after it is still read', () => {
    const text = read('v3-total-and-failed-lines').replace('UCX warmup done\n', '');
    const { results, problems } = parseServingLog(text);
    expect(problems).toEqual(["line 1: the warm-up started here has no 'UCX warmup done' line (the warm-up client failed or was killed)"]);
    expect(results.map((r) => r.concurrency)).toEqual([8, 16]);
  });

  it('a log cut inside the warm-up: the warm-up is named, nothing is recorded', () => {
    const text = read('exact-warmup');
    const cut = text.slice(0, text.indexOf('Exact-shape warmup with concurrency 8 done'));
    const { results, problems } = parseServingLog(cut);
    expect(results).toEqual([]);
    expect(problems).toContainEqual(expect.stringMatching(/the warm-up started here has no 'Exact-shape warmup with concurrency 8 done' line/));
  });
});
