// `benchmark.regression` in the configs of every test type: valid thresholds pass, a wrong one is
// one located error (file:line:col and the key), through the real loader and validator.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlannedTest } from '../../framework/select/plan.ts';
import { formatIssue } from '../../framework/config/issue.ts';
import { testType } from '../../framework/types/registry.ts';
import { baseConfig } from '../fixtures/serving/base-config.ts';

const root = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'regression-config-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const nixlExample = parse(readFileSync(path.join(root, 'test_configs/nixl/perf/kvpipe_shm_16x8M.yaml'), 'utf8')) as Record<string, Record<string, unknown>>;
const examples: Record<string, () => Record<string, Record<string, unknown>>> = {
  disagg: () => baseConfig({}) as Record<string, Record<string, unknown>>,
  wideep: () => baseConfig({}) as Record<string, Record<string, unknown>>,
  nixl: () => structuredClone(nixlExample),
};

function issuesOf(type: string, regression: unknown): string[] {
  const config = examples[type]();
  config.benchmark = { ...config.benchmark, regression };
  const dir = path.join(work, 'test_configs', type, 'perf');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `x${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(config));
  const planned = loadPlannedTest({ testType: type, category: 'perf', name: path.basename(file, '.yaml'), id: path.basename(file, '.yaml'), absFile: file, displayFile: path.relative(work, file) } as never, { gpuType: undefined, source: 'none' }, {});
  return planned.issues.map(formatIssue);
}

describe.each(Object.keys(examples))('benchmark.regression in a %s config', (type) => {
  it('accepts per-metric thresholds and check: false', () => {
    expect(issuesOf(type, { SERVER_MEDIAN_TTFT: { threshold: 3 }, BW: { post_merge: 2, pre_merge: 8 }, X: { check: false } })).toEqual([]);
    const config = examples[type]();
    config.benchmark = { ...config.benchmark, regression: { A: { threshold: 3 } } };
    expect(testType(type)!.regression!(config)).toEqual({ A: { threshold: 3 } });
  });

  it('refuses a threshold that is not a positive percent, and unknown keys, each located', () => {
    const zero = issuesOf(type, { SERVER_MEDIAN_TTFT: { threshold: 0 } });
    expect(zero).toEqual([expect.stringMatching(/x\w+\.yaml:\d+:\d+ benchmark\.regression\.SERVER_MEDIAN_TTFT\.threshold: .*(> 0|exclusiveMinimum|greater)/)]);
    expect(issuesOf(type, { SERVER_MEDIAN_TTFT: { treshold: 3 } }).join('\n')).toMatch(/benchmark\.regression\.SERVER_MEDIAN_TTFT.*treshold/);
    expect(issuesOf(type, { SERVER_MEDIAN_TTFT: 5 }).join('\n')).toMatch(/benchmark\.regression\.SERVER_MEDIAN_TTFT/);
  });
});
