// The embedded llama.cpp serving engine, measured on this machine, per model shape:
//   1. decode rate: one aggregated llama-server streaming a request (its own timings, as llama.cpp's
//      server reports them; the rate a client sees is printed beside) vs a bare llama.cpp decode loop
//      in this process (LlamaRuntime.step, one sequence) on the same model, threads and prompt,
//      rounds alternating. Goal: the server at least 90 % of the bare loop.
//   2. hand-over: the transfer time each disaggregated request's KV cache took (the generation
//      server's report) vs the transfer engine's own READ of the same bytes between two local
//      ranks (bench/fixtures/xfer-read-rank.ts), both shm, of a block in memory and in no cache, as
//      a hand-over finds it (the READ of a block just written, from the core's cache, printed
//      beside). Goal: at most 1.5x the engine's.
//   3. aggregated vs disaggregated: serve-bench (random token-id prompts) against one aggregated
//      server and against a context and a generation server behind the router, 1 thread each (two
//      threads in one server on a shared 2-core machine ran 100x slower: llama.cpp's threads spin
//      at their barriers), at concurrency 1 and 4: median TTFT and ITL, output throughput.
// Appends one JSON line to bench/results/llamacpp-serving.jsonl.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { nodeEntryArgv, spawnLocalRanks } from '../runners/xfer/index.ts';
import { dummyModel } from '../runners/llamacpp/gguf/dummy-model.ts';
import { modelShapes } from '../runners/llamacpp/shapes.ts';
import { LlamaRuntime } from '../runners/llamacpp/llama-runtime.ts';
import { llamaBin, startAggregated, startDisaggregated, type Deployment } from '../tests/fixtures/llamacpp/deployment.ts';
import { appendResult, benchDir, printGoals, printTable, type Goal } from './lib/report.ts';
import { benchArgs } from './lib/smoke.ts';
import { median } from './lib/stats.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/llamacpp-serving.ts [--shapes tiny,qwen3-0.6b] [--rounds 7] [--tokens 96] [--prompt 128]
    [--concurrencies 1,4] [--threads 1] [--smoke]
  Per model shape of --shapes: --rounds of --tokens tokens after a prompt of --prompt tokens,
  serve-bench at each of --concurrencies, --threads CPU threads per server and for the bare loop.
  --smoke: the tiny shape, one round of 8 tokens, no figure kept.`;

const cli = benchOptions({
  args: benchArgs(['--shapes', 'tiny', '--rounds', '1', '--tokens', '8', '--prompt', '16', '--concurrencies', '1']),
  options: {
    shapes: { type: 'string', default: 'tiny,qwen3-0.6b' },
    rounds: { type: 'string', default: '7' },
    tokens: { type: 'string', default: '96' },
    prompt: { type: 'string', default: '128' },
    concurrencies: { type: 'string', default: '1,4' },
    threads: { type: 'string', default: '1' },
  },
}, USAGE);
const shapeNames = cli.someOf('shapes', Object.keys(modelShapes));
const rounds = cli.wholeNumber('rounds');
const tokens = cli.wholeNumber('tokens');
const promptLen = cli.wholeNumber('prompt');
const concurrencies = cli.wholeNumbers('concurrencies');
/** CPU threads of every server and of the bare loop (on a GPU build the layers run on the GPU). */
const threads = cli.wholeNumber('threads');
const scratch = mkdtempSync(path.join(tmpdir(), 'bench-llamacpp-'));
const env = { ...process.env };
const prompt = Array.from({ length: promptLen }, (_, i) => (31 * i + 7) % 32000);
const MAX_SEQ = Math.max(512, promptLen + tokens + 16);

/** The bare loop: prefill, then `tokens` single-sequence decode steps; tokens per second of the steps. */
function bareRate(runtime: LlamaRuntime): number {
  let token = runtime.prefill(0, prompt);
  const t0 = performance.now();
  for (let i = 0; i < tokens; i++) token = runtime.step([{ seq: 0, token, pos: prompt.length + i }])[0];
  const ms = performance.now() - t0;
  runtime.release(0);
  return tokens / (ms / 1000);
}

/** A streamed request of `n` tokens: start to the end of its stream (ms), and the server's own decode rate (its timings). */
async function stream(url: string, n: number): Promise<{ ms: number; serverRate: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: n, temperature: 0, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  if (!text.includes('[DONE]')) throw new Error(`the stream ended without [DONE]: ${text.slice(-200)}`);
  const usage = text.split('\n').filter((l) => l.includes('"usage"')).map((l) => JSON.parse(l.slice('data: '.length)))[0];
  return { ms, serverRate: usage.timings.predicted_per_second };
}

/**
 * The server's decode rate: its own (llama.cpp server's timings: tokens after the first over the
 * time from the first to the last as its loop produced and wrote them), and as a client sees it:
 * `tokens` more tokens per second, a request of tokens + 1 against one of 1 on the same prompt (the
 * prefill and the first token cancel out; chunks that arrive together do not distort it, as timing
 * each chunk would).
 */
async function serverRate(url: string): Promise<{ server: number; client: number }> {
  const one = await stream(url, 1);
  const many = await stream(url, tokens + 1);
  return { server: many.serverRate, client: tokens / ((many.ms - one.ms) / 1000) };
}

/** The engine's own READ of `bytes` between two local ranks: median times (ms), the block in memory and in no cache (cold) and just written (hot). */
async function engineReadMs(bytes: number): Promise<{ cold: number; hot: number }> {
  const out = path.join(scratch, `read-${bytes}.json`);
  // XFER_READ_RANK_ENTRY: the rank bundled to JavaScript (the GPU machine has no tsx).
  const entry = process.env.XFER_READ_RANK_ENTRY ?? path.join(benchDir, 'fixtures', 'xfer-read-rank.ts');
  const result = await spawnLocalRanks(2, nodeEntryArgv(entry, [String(bytes), String(Math.max(20, rounds * 10)), out]));
  if (!result.ok) throw new Error('the engine READ ranks failed');
  const medians = JSON.parse(readFileSync(out, 'utf8'));
  return { cold: medians.medianMs, hot: medians.hotMedianMs };
}

/** Each request's KV hand-over of a disaggregated deployment at concurrency 1. */
async function handovers(url: string): Promise<Array<{ bytes: number; transferMs: number }>> {
  const out: Array<{ bytes: number; transferMs: number }> = [];
  for (let i = 0; i < Math.max(5, rounds * 4); i++) {
    const res = await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, max_tokens: 2, temperature: 0 }) });
    const body = (await res.json()) as { kv_transfer: { bytes: number; transfer_ms: number } };
    out.push({ bytes: body.kv_transfer.bytes, transferMs: body.kv_transfer.transfer_ms });
  }
  return out;
}

/** serve-bench against `url` at concurrency c: median TTFT, ITL (ms) and output throughput. */
async function client(url: string, model: string, c: number, label: string): Promise<{ ttft: number; itl: number; tput: number }> {
  const dir = path.join(scratch, `${label}-c${c}`);
  const port = new URL(url).port;
  const run = await execa(process.execPath, [llamaBin, 'serve-bench', '--model', model, '--backend', 'openai', '--host', '127.0.0.1', '--port', port,
    '--dataset-name', 'random', '--random-ids', '--random-input-len', String(promptLen), '--random-output-len', String(tokens), '--num-prompts', String(c * Math.max(2, rounds)),
    '--max-concurrency', String(c), '--ignore-eos', '--seed', '1', '--save-result', '--result-dir', dir, '--result-filename', 'result.json'], { reject: false, all: true });
  if (run.exitCode !== 0) throw new Error(`serve-bench failed: ${run.all}`);
  const r = JSON.parse(readFileSync(path.join(dir, 'result.json'), 'utf8'));
  if (r.failed > 0) throw new Error(`serve-bench: ${r.failed} failed requests`);
  return { ttft: r.median_ttft_ms, itl: r.median_itl_ms, tput: r.output_throughput };
}

// A signal stops the servers this script started before it ends.
const live = new Set<Deployment>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void Promise.all([...live].map((d) => d.stop())).finally(() => process.exit(130)));
}
const started = (d: Deployment) => (live.add(d), d);

const figures: Record<string, unknown> = { tokens, prompt: promptLen, rounds, threads, library: process.env.LLAMA_CPP_LIB_DIR ?? '@node-llama-cpp/linux-x64 (CPU)' };
const goals: Goal[] = [];
try {
  for (const shape of shapeNames) {
    const model = `dummy:${shape}`;
    const file = dummyModel(shape);
    const worker = { max_batch_size: 4, max_seq_len: MAX_SEQ, max_num_tokens: 256, n_threads: threads };

    // 1. decode rate: server vs bare loop, rounds alternating, both one thread and one sequence.
    const bare: number[] = [];
    const served: number[] = [];
    const seen: number[] = [];
    const runtime = new LlamaRuntime(file, { slots: 1, maxSeqLen: MAX_SEQ, batch: 256, threads });
    const agg1: Deployment = started(await startAggregated(path.join(scratch, `${shape}-agg1`), env, { model, worker: { ...worker, max_batch_size: 1 } }));
    try {
      bareRate(runtime);
      await serverRate(agg1.url); // warm both
      for (let r = 0; r < rounds; r++) {
        bare.push(bareRate(runtime));
        const rates = await serverRate(agg1.url);
        served.push(rates.server);
        seen.push(rates.client);
      }
    } finally {
      await agg1.stop();
      runtime.close();
    }
    const rate = { bare: median(bare), server: median(served), client: median(seen) };
    printTable(`${shape}: decode rate, one sequence, ${threads} thread(s) (tok/s, median of ${rounds})`, ['', 'bare loop', 'server', 'at the client'], [['tok/s', rate.bare.toFixed(1), rate.server.toFixed(1), rate.client.toFixed(1)]]);
    goals.push({ what: `${shape}: server decode rate / bare llama.cpp loop`, value: Number((rate.server / rate.bare).toFixed(3)), limit: 0.9, atMost: false });

    // 2 and 3 (disaggregated): hand-over vs the engine; TTFT/ITL.
    const disagg = started(await startDisaggregated(path.join(scratch, `${shape}-disagg`), env, { model, worker }));
    let kv: Array<{ bytes: number; transferMs: number }>;
    const disaggClient: Record<number, { ttft: number; itl: number; tput: number }> = {};
    try {
      kv = await handovers(disagg.url);
      for (const c of concurrencies) disaggClient[c] = await client(disagg.url, model, c, `${shape}-disagg`);
    } finally {
      await disagg.stop();
    }
    const bytes = kv[0].bytes;
    const handoverMs = median(kv.map((h) => h.transferMs));
    const engine = await engineReadMs(bytes);
    printTable(`${shape}: KV hand-over of a ${promptLen}-token prompt (${bytes} bytes), shm`, ['', 'ms (median)', 'GB/s'], [
      ['hand-over transfer (generation server)', handoverMs.toFixed(4), (bytes / handoverMs / 1e6).toFixed(2)],
      ['engine READ, 2 ranks, block in memory (in no cache)', engine.cold.toFixed(4), (bytes / engine.cold / 1e6).toFixed(2)],
      ['engine READ, 2 ranks, block just written (cache-hot)', engine.hot.toFixed(4), (bytes / engine.hot / 1e6).toFixed(2)],
    ]);
    goals.push({ what: `${shape}: hand-over transfer time / the engine's own READ of the same bytes in memory`, value: Number((handoverMs / engine.cold).toFixed(3)), limit: 1.5, atMost: true });

    const agg = started(await startAggregated(path.join(scratch, `${shape}-agg`), env, { model, worker }));
    const aggClient: Record<number, { ttft: number; itl: number; tput: number }> = {};
    try {
      for (const c of concurrencies) aggClient[c] = await client(agg.url, model, c, `${shape}-agg`);
    } finally {
      await agg.stop();
    }
    printTable(`${shape}: aggregated (1 server) vs disaggregated (ctx + gen), ${threads} thread(s) each, serve-bench`, ['concurrency', 'TTFT agg', 'TTFT disagg', 'ITL agg', 'ITL disagg', 'tok/s agg', 'tok/s disagg'],
      concurrencies.map((c) => [String(c), aggClient[c].ttft.toFixed(2), disaggClient[c].ttft.toFixed(2), aggClient[c].itl.toFixed(2), disaggClient[c].itl.toFixed(2), aggClient[c].tput.toFixed(1), disaggClient[c].tput.toFixed(1)]));
    figures[shape] = { decodeRate: rate, bareRates: bare, serverRates: served, clientRates: seen, handover: { bytes, transferMsMedian: handoverMs, engineReadMsMedian: engine.cold, engineReadHotMsMedian: engine.hot }, aggregated: aggClient, disaggregated: disaggClient };
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
printGoals(goals);
console.log(`appended to ${appendResult('llamacpp-serving', figures, goals)}`);
