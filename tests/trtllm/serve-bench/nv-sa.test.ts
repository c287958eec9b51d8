// serve-bench --nv-sa: the SemiAnalysis client of use_nv_sa_benchmark, built in. Its length
// semantics (np.random.randint(int(len * r), len + 1)), token-id prompts, its result block and the
// `Total failed requests: N` line upstream's run_benchmark_nv_sa.sh prints; run against the
// STAND-IN OpenAI server (tests/fixtures), whose counts are compared with what the client says.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServingLog } from '../../../framework/metrics/extractors/serving.ts';
import { serveBenchMain } from '../../../runners/trtllm/serve-bench/main.ts';
import { parseServeBenchArgs } from '../../../runners/trtllm/serve-bench/options.ts';
import { UsageError } from '../../../runners/common/errors.ts';
import { generatePrompts } from '../../../runners/trtllm/serve-bench/prompts.ts';
import { startStandinServer, type StandinServerOptions } from '../../fixtures/standin-openai-server.ts';
import { maxOf, minOf } from '../../../runners/common/stats.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function standin(options: StandinServerOptions = {}) {
  const server = await startStandinServer(options);
  cleanups.push(() => server.close());
  return server;
}

describe('SA prompts', () => {
  it('draws lengths from [floor(len * r), len] and sends consecutive token ids from a random offset', () => {
    const prompts = generatePrompts({ count: 400, inputLen: 100, outputLen: 20, rangeRatio: 0.8, rangeMode: 'sa', tokenIdVocab: 1000, seed: 0 });
    const inputs = prompts.map((p) => p.words);
    expect(minOf(inputs)).toBeGreaterThanOrEqual(80);
    expect(maxOf(inputs)).toBeLessThanOrEqual(100);
    // Both ends of the interval are drawn (21 values, 400 draws).
    expect(new Set(inputs).size).toBe(21);
    expect(minOf(prompts.map((p) => p.outputLen))).toBeGreaterThanOrEqual(16);
    expect(maxOf(prompts.map((p) => p.outputLen))).toBeLessThanOrEqual(20);
    for (const p of prompts) {
      expect(p.tokenIds).toHaveLength(p.words);
      expect(p.text).toBe('');
      for (let j = 1; j < p.tokenIds!.length; j++) expect(p.tokenIds![j]).toBe((p.tokenIds![j - 1] + 1) % 1000);
    }
    // Ratio 1 (the SA client's default): exactly len; the same seed gives the same prompts.
    const exact = generatePrompts({ count: 5, inputLen: 64, outputLen: 8, rangeRatio: 1, rangeMode: 'sa', tokenIdVocab: 500, seed: 3 });
    expect(exact.map((p) => [p.words, p.outputLen])).toEqual(Array(5).fill([64, 8]));
    expect(generatePrompts({ count: 5, inputLen: 64, outputLen: 8, rangeRatio: 1, rangeMode: 'sa', tokenIdVocab: 500, seed: 3 })).toEqual(exact);
  });

  it('ratio 0 draws from [1, len]: never a 0-token prompt or max_tokens 0', () => {
    const prompts = generatePrompts({ count: 300, inputLen: 4, outputLen: 2, rangeRatio: 0, rangeMode: 'sa', tokenIdVocab: 100, seed: 5 });
    expect(new Set(prompts.map((p) => p.words))).toEqual(new Set([1, 2, 3, 4]));
    expect(new Set(prompts.map((p) => p.outputLen))).toEqual(new Set([1, 2]));
  });
});

describe('SA options', () => {
  const parse = (...args: string[]) => parseServeBenchArgs(['--model', 'm', ...args]);
  it('default ratio 1 and seed 0 as the SA client; ratio within [0, 1]; token ids need the completions endpoint', () => {
    expect(parse('--nv-sa')).toMatchObject({ nvSa: true, rangeRatio: 1, seed: 0, tokenIdVocab: 32000 });
    expect(parse('--nv-sa', '--random-range-ratio', '0', '--random-vocab-size', '128')).toMatchObject({ rangeRatio: 0, tokenIdVocab: 128 });
    expect(() => parse('--nv-sa', '--random-range-ratio', '1.2')).toThrow(/in \[0, 1\] with --nv-sa/);
    expect(() => parse('--nv-sa', '--backend', 'openai-chat')).toThrow(UsageError);
    expect(parse('--nv-sa', '--use-chat-template').ignored).toEqual(['--use-chat-template']);
    expect(parse('--random-ids')).toMatchObject({ nvSa: false, tokenIdVocab: 32000, rangeRatio: 0 });
    expect(() => parse('--random-vocab-size', '128')).toThrow(/bounds the token ids of --random-ids or --nv-sa/);
  });
});

describe('an SA run against the stand-in server', () => {
  it('prints the SA block, then Total failed requests from num_prompts - completed; the parser reads both', async () => {
    const server = await standin({ failEvery: 5 });
    const dir = await mkdtemp(join(tmpdir(), 'nv-sa-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    let stdout = '';
    let stderr = '';
    const code = await serveBenchMain(
      ['--nv-sa', '--model', 'standin-model', '--port', String(server.port), '--dataset-name', 'random', '--num-prompts', '20',
        '--max-concurrency', '4', '--trust-remote-code', '--ignore-eos', '--random-input-len', '50', '--random-output-len', '6',
        '--random-range-ratio', '0.8', '--save-result', '--use-chat-template', '--result-dir', dir, '--result-filename', 'result.json',
        '--percentile-metrics', 'ttft,tpot,itl,e2el'],
      { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
    );
    expect(code, stderr).toBe(0);
    const stats = server.stats();
    expect(stats.requests).toBe(20);
    expect(stats.injected.http500).toBe(4);
    // The SA block has no Total/Failed requests, no User throughput, no failure banner.
    expect(stdout).not.toMatch(/^(Total requests|Failed requests|User throughput):/m);
    expect(stdout).not.toContain('!FAILED REQUESTS!');
    expect(stdout).toMatch(/={50}\nTotal failed requests: 4\n$/);
    const parsed = parseServingLog(`Benchmarking with concurrency 4 ... 20 prompts\n${stdout}Benchmark with concurrency 4 done\n`);
    expect(parsed.problems).toEqual([]);
    const value = (name: string) => parsed.results[0].metrics.find((m) => m.name === name)?.value;
    expect([value('SERVER_SUCCESSFUL_REQUESTS'), value('SERVER_FAILED_REQUESTS')]).toEqual([16, 4]);
    // Token-id prompts: the stand-in counts one token per id; the drawn lengths are recorded.
    const result = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8'));
    expect(result).toMatchObject({ nv_sa: true, random_range_mode: 'sa', prompt_kind: 'token_ids', seed: 0, num_prompts: 20, completed: 16 });
    expect(result.requested_input_lens).toHaveLength(20);
    for (const len of result.requested_input_lens) expect(len >= 40 && len <= 50).toBe(true);
    expect(value('SERVER_TOTAL_INPUT_TOKENS')).toBe(stats.promptTokens);
  });
});
