// Every shape found in upstream's disagg corpus (perf-sanity with the SA client or without
// max_seq_len, wideep gen_only with DEFAULT transceivers, Kimi accuracy with the older accuracy
// spelling, stress, transceiver_runtime variants with nsys, the older `sequence` layout), as our
// own fixtures of those shapes (tests/fixtures/upstream-shapes): validated, listed per GPU type and
// built by scripts/check-upstream-corpus.ts, the script that gives docs/trtllm-compatibility.md
// its figures for upstream's own files.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCorpus, formatCorpusReport, type CorpusReport } from '../../scripts/check-upstream-corpus.ts';

const folder = path.resolve(import.meta.dirname, '../fixtures/upstream-shapes');
let report: CorpusReport | undefined;
const corpus = async () => (report ??= await checkCorpus(folder));
const byId = async (id: string) => (await corpus()).results.find((r) => r.id === id)!;

describe('upstream\'s config shapes', () => {
  it('every shape upstream runs is accepted, RUN on each GPU type it names, and builds a job', async () => {
    const { accepted, refused } = await corpus();
    expect(accepted.map((r) => r.id).sort()).toEqual([
      'disagg_perf-sanity_b200-toy-fp4_1k1k_con64_ctx1_dep4_gen1_dep8_eplb0_mtp1_ccb-UCX',
      'disagg_perf-sanity_gb200_toy-oss-fp4_1k1k_con32_ctx1_tp1_gen1_dep2_eplb0_mtp0_ccb-UCX',
      'disagg_perf_toy-qwen-fp4_1k1k_ctx1_gen1_dep8_bs32_eplb0_mtp0_ccb-NIXL-cpp',
      'disagg_stress_toy-r1-fp4_1k1k_ctx1_gen1_dep8_bs16_eplb0_mtp0_ccb-DEFAULT',
      'wideep_accuracy_toy-k2-thinking-fp4_1k1k_ctx3_gen1_dep16_bs256_eplb0_mtp0_ccb-UCX',
      'wideep_perf_toy-r1-fp4_1k1k_ctx2_gen1_dep16_bs64_eplb64_mtp3_ccb-DEFAULT',
    ]);
    for (const r of accepted) {
      expect(r.build, r.id).toBeUndefined();
      expect(Object.values(r.listing).every((state) => state === 'RUN'), r.id).toBe(true);
    }
    expect((await byId('wideep_perf_toy-r1-fp4_1k1k_ctx2_gen1_dep16_bs64_eplb64_mtp3_ccb-DEFAULT')).listing).toEqual({ GB200: 'RUN', GB300: 'RUN' });
    expect(refused.map((r) => r.id)).toEqual(['disagg_perf_toy-r1-fp4_000']);
  });

  it('the older layout is refused, each key saying what upstream does with it', async () => {
    const old = await byId('disagg_perf_toy-r1-fp4_000');
    expect(old.issues.join('\n')).toMatch(/sequence: is the older layout .*fails with a KeyError/);
    expect(old.issues.join('\n')).toMatch(/environment\.dataset_file: is the older layout's place of the dataset/);
    expect(old.issues.join('\n')).toMatch(/worker_config\.eplb_num_slots: is the older layout's EPLB setting/);
    expect(old.listing).toEqual({ GB200: 'INVALID' });
  });

  it('the test list\'s node ids (test_benchmark and test_accuracy) all match', async () => {
    expect((await corpus()).lists).toEqual([{ list: 'shapes.txt', ids: 4, matched: 4, unknown: [] }]);
  });

  it('the report the docs table comes from', async () => {
    const text = formatCorpusReport(await corpus());
    expect(text).toContain('## Configs: 6 of 7 accepted');
    expect(text).toContain('| disagg/perf-sanity | 2 | 2 |');
    expect(text).toContain('| test_configs/disagg/perf/toy-r1-fp4_000.yaml |');
    // The fixture files say which upstream shape they stand for.
    const sample = readFileSync(path.join(folder, 'test_configs/disagg/perf-sanity/b200-toy-fp4_1k1k_con64_ctx1_dep4_gen1_dep8_eplb0_mtp1_ccb-UCX.yaml'), 'utf8');
    expect(sample).toMatch(/^# Shape of upstream's perf-sanity configs/);
  });
});
