// A plan keeps each config's verdict (schema and rule issues, GPU types) in the config cache and
// serves it to the next plan of the same content; a verdict that looked at files beside the config
// (a matrix file) is found again each time, so a change to that file is never hidden.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openParseCache, readYamlFileCached } from '../../framework/config/parse-cache.ts';
import { planRun } from '../../framework/select/plan.ts';
import { readSettings } from '../../framework/settings.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const workDir = mkdtempSync(path.join(tmpdir(), 'plan-cache-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const settings = readSettings({ WORK_DIR: workDir, OUTPUT_PATH: path.join(workDir, 'out') });
const gpu = { gpuType: 'GB200', source: 'GPU_TYPE' } as const;

/** A plan as a fresh process makes it: the cache read back from disk. */
function plan(testType: string) {
  openParseCache(`another set of configs ${workDir}`);
  return planRun({ settings, gpu, testType, env: {} });
}

describe('the plan and the config cache', () => {
  const disagg = path.join(workDir, 'test_configs/disagg/perf');
  mkdirSync(disagg, { recursive: true });
  const example = readFileSync(path.join(repo, 'test_configs/disagg/perf/deepseek-r1-fp4_1k1k_ctx1_gen1_tep16_bs64_eplb0_mtp0_ccb-NIXL.yaml'), 'utf8');
  writeFileSync(path.join(disagg, 'good.yaml'), example);
  // a schema issue: a string where a number belongs, with its position
  writeFileSync(path.join(disagg, 'bad.yaml'), example.replace(/^(\s*)input_length: \d+/m, '$1input_length: many'));

  it('serves the verdicts of unchanged configs, issues and their positions as found the first time', () => {
    const first = plan('disagg');
    const bad = first.tests.find((t) => t.id.endsWith('_bad'))!;
    expect(bad.issues.length).toBeGreaterThan(0);
    expect(bad.issues[0]).toMatchObject({ line: expect.any(Number), message: expect.stringMatching(/many/) });
    expect(first.tests.find((t) => t.id.endsWith('_good'))!.issues).toEqual([]);
    const second = plan('disagg');
    expect(second.tests.map((t) => [t.id, t.issues, t.supportedGpus, t.skipReason])).toEqual(first.tests.map((t) => [t.id, t.issues, t.supportedGpus, t.skipReason]));
    for (const t of second.tests) expect(readYamlFileCached(t.absFile, t.displayFile).verdict).toEqual({ issues: t.issues, supportedGpus: t.supportedGpus });
    expect(second.tests.find((t) => t.id.endsWith('_good'))!.resolved?.config).toEqual(first.tests.find((t) => t.id.endsWith('_good'))!.config);
  });

  it('validates again a config whose rules read a file beside it', () => {
    const nixl = path.join(workDir, 'test_configs/nixl/perf');
    cpSync(path.join(repo, 'test_configs/nixl/perf/ct_seed_read_shm.yaml'), path.join(nixl, 'ct.yaml'), { recursive: true });
    cpSync(path.join(repo, 'test_configs/nixl/perf/matrices'), path.join(nixl, 'matrices'), { recursive: true });
    const ct = () => plan('nixl').tests.find((t) => t.id === 'nixl_perf_ct')!;
    expect(ct().issues).toEqual([]);
    expect(readYamlFileCached(path.join(nixl, 'ct.yaml'), 'ct.yaml').verdict).toBeUndefined();
    writeFileSync(path.join(nixl, 'matrices/seed-example.txt'), '0 1M\n0 0\n');
    expect(ct().issues.map((i) => i.message).join('\n')).toMatch(/2 x 2 but the run has 4 ranks/);
  });
});
