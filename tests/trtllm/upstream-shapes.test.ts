// Every shape found in upstream's disagg corpus (perf-sanity with the SA client or without
// max_seq_len, wideep gen_only with DEFAULT transceivers, Kimi accuracy with the older accuracy
// spelling, stress, transceiver_runtime variants with nsys, 128k8k with a pipeline-parallel ctx
// server and a YAML anchor, FP8 with cuda_graph_config.max_batch_size, the older `sequence`
// layout, SA with gen_only, a concurrency over the gen batch), as our own fixtures of those shapes
// (tests/fixtures/upstream-shapes): validated, listed per GPU type and built by
// scripts/check-upstream-corpus.ts, the script that gives docs/trtllm-compatibility.md its figures
// for upstream's own files.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkCorpus, formatCorpusReport, type CorpusReport } from '../../scripts/check-upstream-corpus.ts';

const folder = path.resolve(import.meta.dirname, '../fixtures/upstream-shapes');
const jobs = mkdtempSync(path.join(tmpdir(), 'upstream-shapes-'));
afterAll(() => rmSync(jobs, { recursive: true, force: true }));
let report: CorpusReport | undefined;
const corpus = async () => (report ??= await checkCorpus(folder, jobs));
const byId = async (id: string) => (await corpus()).results.find((r) => r.id === id)!;

describe('upstream\'s config shapes', () => {
  it('every shape upstream runs is accepted, WAITING (it would run) on each GPU type it names, and builds a job', async () => {
    const { accepted, refused } = await corpus();
    expect(accepted.map((r) => r.id).sort()).toEqual([
      'disagg_perf-sanity_b200-toy-fp4_1k1k_con64_ctx1_dep4_gen1_dep8_eplb0_mtp1_ccb-UCX',
      'disagg_perf-sanity_gb200_toy-oss-fp4_1k1k_con32_ctx1_tp1_gen1_dep2_eplb0_mtp0_ccb-UCX',
      'disagg_perf_toy-qwen-fp4_1k1k_ctx1_gen1_dep8_bs32_eplb0_mtp0_ccb-NIXL-cpp',
      'disagg_perf_toy-qwen-fp8_1k1k_ctx1_gen1_tep4_bs32_eplb0_mtp0_ccb-NIXL-python',
      'disagg_perf_toy-r1-fp4_128k8k_ctx1_pp4_gen2_tep4_bs1_eplb0_mtp3-Default',
      'disagg_stress_toy-r1-fp4_1k1k_ctx1_gen1_dep8_bs16_eplb0_mtp0_ccb-DEFAULT',
      'wideep_accuracy_toy-k2-thinking-fp4_1k1k_ctx3_gen1_dep16_bs256_eplb0_mtp0_ccb-UCX',
      'wideep_perf_toy-r1-fp4_1k1k_ctx2_gen1_dep16_bs64_eplb64_mtp3_ccb-DEFAULT',
    ]);
    for (const r of accepted) {
      expect(r.build, r.id).toBeUndefined();
      expect(Object.values(r.listing).every((state) => state === 'WAITING'), r.id).toBe(true);
    }
    expect((await byId('wideep_perf_toy-r1-fp4_1k1k_ctx2_gen1_dep16_bs64_eplb64_mtp3_ccb-DEFAULT')).listing).toEqual({ GB200: 'WAITING', GB300: 'WAITING' });
    expect((await byId('disagg_perf_toy-r1-fp4_128k8k_ctx1_pp4_gen2_tep4_bs1_eplb0_mtp3-Default')).listing).toEqual({ GB300: 'WAITING' });
    expect(refused.map((r) => r.id).sort()).toEqual([
      'disagg_perf_toy-r1-fp4_000',
      'disagg_perf_toy-r1-fp4_8k1k_ctx1_gen1_dep8_bs16_eplb16_mtp3_ccb-UCX',
      'disagg_perf_toy-r1-fp4_8k1k_ctx1_gen3_tep8_bs16_eplb0_mtp3_ccb-NIXL',
    ]);
  });

  it('a YAML anchor shared by gen and ctx, a pp4 ctx server and a folded env string build as upstream reads them', async () => {
    const job = (await byId('disagg_perf_toy-r1-fp4_128k8k_ctx1_pp4_gen2_tep4_bs1_eplb0_mtp3-Default')).jobDir!;
    const ctx = parse(readFileSync(path.join(job, 'ctx_config.yaml'), 'utf8'));
    const gen = parse(readFileSync(path.join(job, 'gen_config.yaml'), 'utf8'));
    expect(ctx.speculative_config).toEqual({ decoding_type: 'MTP', num_nextn_predict_layers: 3 });
    expect(gen.speculative_config).toEqual(ctx.speculative_config);
    expect(ctx.pipeline_parallel_size).toBe(4);
    const script = readFileSync(path.join(job, 'job.sh'), 'utf8');
    // The ctx server's 4 ranks (tp1 x pp4), the folded env string as one line, one prompt per
    // concurrency and round: concurrency 1 x 2 gen servers, multi_round 1.
    expect(script).toMatch(/start_server CTX_0 .* --ntasks 4 /);
    expect(script).toContain("'TRTLLM_SERVER_DISABLE_GC=1' 'ENROOT_ALLOW_DEV=yes'");
    expect(script).toMatch(/--nv-sa .*--num-prompts 2 --max-concurrency 2 /);
  });

  it('what upstream stops on is refused with upstream\'s reason: SA with gen_only, a concurrency over the gen batch', async () => {
    const sa = await byId('disagg_perf_toy-r1-fp4_8k1k_ctx1_gen1_dep8_bs16_eplb16_mtp3_ccb-UCX');
    expect(sa.issues.join('\n')).toMatch(/use_nv_sa_benchmark: .*gen_only .*upstream's submit\.py stops/);
    const over = await byId('disagg_perf_toy-r1-fp4_8k1k_ctx1_gen3_tep8_bs16_eplb0_mtp3_ccb-NIXL');
    expect(over.issues.join('\n')).toMatch(/concurrency 18 exceeds gen max_batch_size = 16 \(upstream's config_validator refuses it too\)/);
  });

  it('the older layout is refused, each key saying what upstream does with it', async () => {
    const old = await byId('disagg_perf_toy-r1-fp4_000');
    expect(old.issues.join('\n')).toMatch(/sequence: is the older layout .*fails with a KeyError/);
    expect(old.issues.join('\n')).toMatch(/environment\.dataset_file: is the older layout's place of the dataset/);
    expect(old.issues.join('\n')).toMatch(/worker_config\.eplb_num_slots: is the older layout's EPLB setting/);
    expect(old.listing).toEqual({ GB200: 'FAILED' });
  });

  it('the test list\'s node ids (test_benchmark and test_accuracy) all match', async () => {
    expect((await corpus()).lists).toEqual([{ list: 'shapes.txt', ids: 4, matched: 4, refused: [], unknown: [] }]);
  });

  it('the report the docs table comes from', async () => {
    const text = formatCorpusReport(await corpus());
    expect(text).toContain('## Configs: 8 of 11 accepted');
    expect(text).toContain('| disagg/perf-sanity | 2 | 2 |');
    expect(text).toContain('| disagg/perf | 3 | 6 |');
    expect(text).toContain('| shapes.txt | 4 | 4 | - | - |');
    expect(text).toContain('| test_configs/disagg/perf/toy-r1-fp4_000.yaml |');
    // The fixture files say which upstream shape they stand for.
    const sample = readFileSync(path.join(folder, 'test_configs/disagg/perf-sanity/b200-toy-fp4_1k1k_con64_ctx1_dep4_gen1_dep8_eplb0_mtp1_ccb-UCX.yaml'), 'utf8');
    expect(sample).toMatch(/^# Shape of upstream's perf-sanity configs/);
  });
});
