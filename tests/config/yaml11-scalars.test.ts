// A disagg config as upstream's loader reads it (PyYAML, YAML 1.1), end to end through loading,
// validation and job building: `streaming: yes` is true, an unquoted date meets the schema as a
// date, and the engine's option files are written so that PyYAML reads back the same values.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPlannedTest } from '../../framework/select/plan.ts';
import { testType } from '../../framework/types/registry.ts';
import { loadYaml } from '../../runners/common/yaml-load.ts';
import { repoRoot } from '../fixtures/reliability/suite-run.ts';

const example = fg.sync('test_configs/disagg/perf/*ctx1_gen1*.yaml', { cwd: repoRoot }).sort()[0];
const text = readFileSync(path.join(repoRoot, example), 'utf8').replace(/<([a-z_]+)>/g, '/filled/$1');
const dir = mkdtempSync(path.join(tmpdir(), 'yaml11-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function plan(name: string, yaml: string) {
  const absFile = path.join(dir, `${name}.yaml`);
  writeFileSync(absFile, yaml);
  return loadPlannedTest({ id: `disagg_perf_${name}`, testType: 'disagg', category: 'perf', stem: name, absFile, displayFile: `test_configs/disagg/perf/${name}.yaml` }, { gpuType: 'GB200', source: 'GPU_TYPE' }, { MODEL_DIR: '/m', DATASET_DIR: '/d' });
}

describe('a disagg config read as PyYAML reads it', () => {
  it('streaming: yes is true, and the config is valid', () => {
    expect(text).toMatch(/^ {2}streaming: true$/m);
    const planned = plan('streaming_yes', text.replace(/^ {2}streaming: true$/m, '  streaming: yes'));
    expect(planned.issues).toEqual([]);
    expect((planned.config!.benchmark as Record<string, unknown>).streaming).toBe(true);
  });

  it('an unquoted date where text is expected: the schema says it got a date, and how to keep it text', () => {
    const planned = plan('date', text.replace(/^( {2}model_name: ).*$/m, '$12025-01-31'));
    expect(planned.issues).toHaveLength(1);
    expect(planned.issues[0]).toMatchObject({ path: 'metadata.model_name', message: 'expected string, got a date 2025-01-31 (an unquoted date is one, as PyYAML reads it; quote it for text)' });
  });

  it('the engine\'s option files read back, as YAML 1.1, as the values the config gave', async () => {
    const extra = '    pyyaml_yes: "yes"\n    pyyaml_sexagesimal: "1:30"\n    pyyaml_octal: 017\n    pyyaml_small: 1.0e-07\n    pyyaml_text: 1e3\n    pyyaml_date: 2025-01-31\n';
    const planned = plan('engine_values', text.replace(/^ {2}gen:\n/m, `  gen:\n${extra}`));
    expect(planned.issues).toEqual([]);
    const logDir = path.join(dir, 'job');
    await testType('disagg')!.buildJob({ testId: planned.id, category: 'perf', config: planned.resolved!.config, logDir, workDir: repoRoot, packageRoot: repoRoot, gpuType: 'GB200' });
    const written = readFileSync(path.join(logDir, 'gen_config.yaml'), 'utf8');
    const back = loadYaml(written);
    expect(back.problems).toEqual([]);
    expect(back.data).toMatchObject({ pyyaml_yes: 'yes', pyyaml_sexagesimal: '1:30', pyyaml_octal: 15, pyyaml_small: 1e-7, pyyaml_text: '1e3', pyyaml_date: new Date(Date.UTC(2025, 0, 31)) });
    expect(written).toMatch(/^pyyaml_small: 1\.0e-07$/m);
    expect(written).toMatch(/^pyyaml_date: 2025-01-31$/m);
  });
});
