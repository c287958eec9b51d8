// Property-based fuzzing in CI: a fixed seed and a bounded count (FUZZ_RUNS, default 150 per
// property), so a failure reproduces; scripts/fuzz.ts runs the same properties at nightly size.
// Asserted: no uncaught exception, every problem located in one line, loaded data a tree (see
// tests/fuzz/properties.ts). The slowest case is printed, not judged (the machine may be loaded).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { extractorNames, getExtractor } from '../../framework/metrics/extractors/index.ts';
import { finiteMetricsOnly } from '../../framework/metrics/log-parser.ts';
import { checkBytes, checkConfig, checkLog, configArbitraries, logArbitraries, NEVER_COMPLAINS, newStats } from '../fuzz/properties.ts';

const SEED = 20261126;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

describe('property-based fuzzing (fast-check, fixed seed)', () => {
  const configs = configArbitraries();
  const logs = logArbitraries();

  it('random YAML from config tokens: loads, or every problem is located', { timeout: 600_000 }, () => {
    const stats = newStats();
    fc.assert(fc.property(configs.random, (c) => checkConfig(c.text, c.type, c.category, stats)), { seed: SEED, numRuns: RUNS });
    console.log(`random YAML: ${JSON.stringify(stats.outcomes)}, slowest ${stats.slowestMs.toFixed(1)} ms`);
    expect(stats.cases).toBe(RUNS);
  });

  it('mutated example configs: load, validate or give located issues; every outcome is reached', { timeout: 600_000 }, () => {
    const stats = newStats();
    fc.assert(fc.property(configs.mutated, (c) => checkConfig(c.text, c.type, c.category, stats)), { seed: SEED, numRuns: RUNS * 2 });
    console.log(`mutated configs: ${JSON.stringify(stats.outcomes)}, slowest ${stats.slowestMs.toFixed(1)} ms`);
    // Not vacuous: the mutations reach parse errors, invalid and valid configs.
    expect(Object.keys(stats.outcomes).sort()).toEqual(['invalid', 'parse error', 'valid']);
  });

  it('random bytes as a config file: text or one located refusal', { timeout: 600_000 }, () => {
    const stats = newStats();
    fc.assert(fc.property(configs.bytes, (b) => checkBytes(b, stats)), { seed: SEED, numRuns: RUNS });
    expect(stats.outcomes.refused).toBeGreaterThan(0);
  });

  it('every log parser, on mutated upstream-format logs and random text: never an exception, finite metrics', { timeout: 600_000 }, () => {
    const stats = newStats();
    fc.assert(fc.property(logs.mutated, (l) => checkLog(l.name, l.file, l.text, stats)), { seed: SEED, numRuns: RUNS * 3 });
    fc.assert(fc.property(logs.random, (l) => checkLog(l.name, l.file, l.text, stats)), { seed: SEED, numRuns: RUNS });
    console.log(`logs: ${JSON.stringify(stats.outcomes)}, slowest ${stats.slowestMs.toFixed(1)} ms`);
    expect(stats.cases).toBe(RUNS * 4);
    // Not vacuous: every parser both read metrics and found problems in some of its cases.
    for (const name of extractorNames()) {
      expect(stats.outcomes[`${name}: metrics`] ?? 0, `${name} never read a metric`).toBeGreaterThan(0);
      if (!NEVER_COMPLAINS.includes(name)) expect(stats.outcomes[`${name}: problems`] ?? 0, `${name} never found a problem`).toBeGreaterThan(0);
    }
  });

  it('found by the fuzzer: a bandwidth of 1.31e9991554 (Infinity) is a problem, not a recorded metric', () => {
    const log = readFileSync(path.join(import.meta.dirname, '../fixtures/logs/nixl/nixlbench-older.log'), 'utf8').replace(/^(4096 .*?)\S+(\s*)$/m, '$11.31e9991554$2');
    const result = finiteMetricsOnly(getExtractor('nixlbench')!(log, { logFile: 'nixlbench.log', extractor: 'nixlbench' }));
    expect(result.metrics.every((m) => Number.isFinite(m.value))).toBe(true);
    expect(result.problems.some((p) => /is Infinity, not a finite number; not recorded$/.test(p))).toBe(true);
  });
});
