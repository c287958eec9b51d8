// Command-line options of `disagg-bench serve-bench`, spelled like benchmark_serving's where the
// meaning is the same, so a job script can call either client with the same arguments.
import { UsageError } from '../../common/errors.ts';
import { readArgs, type ArgSpec } from '../../common/args/read-args.ts';

export type LatencyMetricName = 'ttft' | 'tpot' | 'itl' | 'e2el';
export const latencyMetricNames: readonly LatencyMetricName[] = ['ttft', 'tpot', 'itl', 'e2el'];

export type ApiKind = 'completions' | 'chat';

export interface ServeBenchOptions {
  /** 'openai' (completions) or 'openai-chat' (chat completions). Default 'openai'. */
  backend: 'openai' | 'openai-chat';
  /** Model name sent in every request. Required (as in benchmark_serving). */
  model: string;
  /** Full URL of the endpoint, from --base-url or --host/--port, plus --endpoint. */
  url: URL;
  /** Which request/stream shape the endpoint speaks, from --backend or the endpoint's path. */
  api: ApiKind;
  numPrompts: number;
  /** null = all prompts at once (benchmark_serving's default). */
  maxConcurrency: number | null;
  /** Prompt length in words (≈ tokens, see prompts.ts). Default 1024. */
  inputLen: number;
  /** max_tokens of every request. Default 128. */
  outputLen: number;
  /** Lengths drawn from [len * (1 - r), len * (1 + r)] (default 0), or with --nv-sa from [floor(len * r), len] (default 1). */
  rangeRatio: number;
  /**
   * --nv-sa: the SemiAnalysis client upstream's run_benchmark_nv_sa.sh runs (use_nv_sa_benchmark):
   * its length semantics, token-id prompts, its result block (no Total/Failed/User throughput
   * lines), then `Total failed requests: N` (num_prompts - completed) as that script prints.
   */
  nvSa: boolean;
  /** Token-id prompts (--random-ids, implied by --nv-sa) from ids below this vocabulary size. */
  tokenIdVocab: number | null;
  /** null = a fresh random seed, printed so the run can be repeated. */
  seed: number | null;
  ignoreEos: boolean;
  /** Metrics whose section is printed, in the fixed order ttft, tpot, itl, e2el. */
  percentileMetrics: LatencyMetricName[];
  /** Percentiles printed in each section (e.g. [50, 90, 99]). Default [99]. */
  metricPercentiles: number[];
  /** JSON result file, or null when not asked. */
  saveResult: string | null;
  /** Also save per-request arrays (lengths, ttfts, itls, e2els, errors) in the JSON. */
  saveDetailed: boolean;
  /** Per-request limit in seconds (whole request, first byte to last). Default 6 h, as aiohttp's. */
  requestTimeoutS: number;
  /** Options accepted for compatibility that change nothing here (reported on stderr). */
  ignored: string[];
}

/** Flags of benchmark_serving that mean nothing for this client: accepted, reported, no effect. */
// --use-chat-template: the SA client wraps its prompt in the model's chat template; the prompt
// here is already the requested number of tokens, and no tokenizer is loaded.
export const ignoredFlags = new Set(['--no-test-input', '--disable-tqdm', '--trust-remote-code', '--use-chat-template']);
export const ignoredWithValue = new Set(['--tokenizer', '--tokenizer-mode', '--served-model-name', '--burstiness']);

interface RawArgs {
  values: Map<string, string>;
  flags: Set<string>;
  ignored: string[];
}

export const valueOptions = new Set([
  '--backend', '--model', '--host', '--port', '--base-url', '--endpoint', '--dataset-name',
  '--random-input-len', '--random-output-len', '--random-range-ratio', '--num-prompts',
  '--max-concurrency', '--request-rate', '--seed', '--percentile-metrics', '--metric-percentiles',
  '--result-dir', '--result-filename', '--request-timeout', '--random-vocab-size',
]);
export const flagOptions = new Set(['--ignore-eos', '--save-detailed', '--nv-sa', '--random-ids']);

/** Ids below this are valid in every common LLM vocabulary (Llama-2's is the smallest, 32000). */
export const DEFAULT_TOKEN_ID_VOCAB = 32000;

/**
 * serve-bench's words: benchmark_serving's options, read as argparse reads them (the argument
 * layer's argparse style); --save-result is argparse's nargs='?' (a flag, or the file after it).
 */
export const serveBenchArgSpec: ArgSpec = {
  style: 'argparse',
  optionalValue: ['save-result'],
  options: Object.fromEntries([
    ...[...valueOptions, ...ignoredWithValue, '--save-result'].map((o) => [o.slice(2), { type: 'string' as const }]),
    ...[...flagOptions, ...ignoredFlags].map((o) => [o.slice(2), { type: 'boolean' as const }]),
  ]),
};

function splitArgs(argv: string[]): RawArgs {
  const parsed = readArgs(argv, serveBenchArgSpec);
  const raw: RawArgs = { values: new Map(), flags: new Set(), ignored: [] };
  const ignored = (name: string) => ignoredFlags.has(name) || ignoredWithValue.has(name);
  for (const [name, value] of Object.entries(parsed.values)) {
    if (ignored(`--${name}`)) continue;
    if (typeof value === 'string') raw.values.set(`--${name}`, value);
    else if (value === true) raw.flags.add(`--${name}`);
  }
  for (const name of parsed.alone) raw.flags.add(`--${name}`);
  // in the order given, each time given, as the run reports them
  for (const t of parsed.tokens) {
    if (t.kind === 'option' && ignored(`--${t.name}`)) raw.ignored.push(t.value === undefined ? `--${t.name}` : `--${t.name} ${t.value}`);
  }
  return raw;
}

function integer(raw: RawArgs, name: string, fallback: number, min: number): number {
  const text = raw.values.get(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function number(raw: RawArgs, name: string, fallback: number, check: (v: number) => boolean, what: string): number {
  const text = raw.values.get(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !check(value)) {
    throw new UsageError(`${name} must be ${what}, got ${JSON.stringify(text)}`);
  }
  return value;
}

function parseMetricNames(text: string): LatencyMetricName[] {
  const asked = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of asked) {
    if (!latencyMetricNames.includes(name as LatencyMetricName)) {
      throw new UsageError(`--percentile-metrics: unknown metric ${JSON.stringify(name)} (allowed: ${latencyMetricNames.join(', ')})`);
    }
  }
  return latencyMetricNames.filter((name) => asked.includes(name));
}

function parsePercentiles(text: string): number[] {
  return text.split(',').map((s) => {
    const p = Number(s.trim());
    if (s.trim() === '' || !Number.isFinite(p) || p < 0 || p > 100) {
      throw new UsageError(`--metric-percentiles: ${JSON.stringify(s)} is not a percentile in [0, 100]`);
    }
    return p;
  });
}

function endpointUrl(raw: RawArgs, backend: ServeBenchOptions['backend']): URL {
  const endpoint = raw.values.get('--endpoint') ?? (backend === 'openai-chat' ? '/v1/chat/completions' : '/v1/completions');
  const base = raw.values.get('--base-url')
    ?? `http://${raw.values.get('--host') ?? '127.0.0.1'}:${integer(raw, '--port', 8000, 0)}`;
  let url: URL;
  try {
    url = new URL(`${base.replace(/\/+$/, '')}${endpoint.startsWith('/') ? '' : '/'}${endpoint}`);
  } catch {
    throw new UsageError(`not a valid endpoint URL: ${JSON.stringify(base + endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`endpoint URL must be http or https, got ${url.href}`);
  }
  return url;
}

function saveResultPath(raw: RawArgs, backend: string, model: string, maxConcurrency: number | null): string | null {
  const explicit = raw.values.get('--save-result');
  if (explicit !== undefined) return explicit;
  if (!raw.flags.has('--save-result')) return null;
  // benchmark_serving's default name when only the flag is given.
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const concurrency = maxConcurrency === null ? '' : `-concurrency${maxConcurrency}`;
  const name = raw.values.get('--result-filename') ?? `${backend}-infqps${concurrency}-${model.split('/').pop()}-${stamp}.json`;
  const dir = raw.values.get('--result-dir');
  return dir === undefined ? name : `${dir.replace(/\/+$/, '')}/${name}`;
}

/** Parses serve-bench's arguments; throws UsageError with the reason on bad input. */
export function parseServeBenchArgs(argv: string[]): ServeBenchOptions {
  const raw = splitArgs(argv);
  const backend = raw.values.get('--backend') ?? 'openai';
  if (backend !== 'openai' && backend !== 'openai-chat') {
    throw new UsageError(`--backend must be openai or openai-chat, got ${JSON.stringify(backend)}`);
  }
  const model = raw.values.get('--model');
  if (!model) throw new UsageError('--model is required (the model name sent in each request)');
  const dataset = raw.values.get('--dataset-name') ?? 'random';
  if (dataset !== 'random') {
    throw new UsageError(`--dataset-name: only "random" is supported by serve-bench, got ${JSON.stringify(dataset)}`);
  }
  const rate = raw.values.get('--request-rate');
  if (rate !== undefined && rate !== 'inf') {
    throw new UsageError(`--request-rate: only "inf" (all requests at once, bounded by --max-concurrency) is supported, got ${JSON.stringify(rate)}`);
  }
  const url = endpointUrl(raw, backend);
  const nvSa = raw.flags.has('--nv-sa');
  const ids = nvSa || raw.flags.has('--random-ids');
  if (ids && (backend === 'openai-chat' || url.pathname.endsWith('/chat/completions'))) {
    throw new UsageError(`${nvSa ? '--nv-sa' : '--random-ids'} sends token ids as the prompt, which only the completions endpoint takes (use --backend openai)`);
  }
  if (!ids && raw.values.has('--random-vocab-size')) {
    throw new UsageError('--random-vocab-size bounds the token ids of --random-ids or --nv-sa prompts; give one of them, or leave it out');
  }
  const maxConcurrency = raw.values.has('--max-concurrency') ? integer(raw, '--max-concurrency', 1, 1) : null;
  return {
    backend,
    model,
    url,
    api: backend === 'openai-chat' || url.pathname.endsWith('/chat/completions') ? 'chat' : 'completions',
    numPrompts: integer(raw, '--num-prompts', 1000, 1),
    maxConcurrency,
    inputLen: integer(raw, '--random-input-len', 1024, 1),
    outputLen: integer(raw, '--random-output-len', 128, 1),
    rangeRatio: nvSa
      ? number(raw, '--random-range-ratio', 1, (v) => v >= 0 && v <= 1, 'in [0, 1] with --nv-sa (lengths from [len * r, len])')
      : number(raw, '--random-range-ratio', 0, (v) => v >= 0 && v < 1, 'in [0, 1)'),
    nvSa,
    tokenIdVocab: ids ? integer(raw, '--random-vocab-size', DEFAULT_TOKEN_ID_VOCAB, 2) : null,
    // The SA client seeds numpy with --seed, default 0; serve-bench otherwise draws (and prints) one.
    seed: raw.values.has('--seed') ? integer(raw, '--seed', 0, 0) : nvSa ? 0 : null,
    ignoreEos: raw.flags.has('--ignore-eos'),
    percentileMetrics: parseMetricNames(raw.values.get('--percentile-metrics') ?? 'ttft,tpot,itl,e2el'),
    metricPercentiles: parsePercentiles(raw.values.get('--metric-percentiles') ?? '99'),
    saveResult: saveResultPath(raw, backend, model, maxConcurrency),
    saveDetailed: raw.flags.has('--save-detailed'),
    requestTimeoutS: number(raw, '--request-timeout', 6 * 3600, (v) => v > 0, 'a number of seconds > 0'),
    ignored: raw.ignored,
  };
}

export const serveBenchUsage = `usage: disagg-bench serve-bench --model NAME [options]

Streams completions from an OpenAI-compatible endpoint and prints benchmark_serving's result block.
  --backend openai|openai-chat     request shape (default openai = /v1/completions)
  --base-url URL | --host H --port P   server (default http://127.0.0.1:8000)
  --endpoint PATH                  default /v1/completions (/v1/chat/completions for openai-chat)
  --dataset-name random            the only dataset: prompts of random words (see prompts.ts)
  --random-input-len N             prompt length in words (default 1024)
  --random-output-len N            max_tokens per request (default 128)
  --random-range-ratio R           lengths drawn from [N*(1-R), N*(1+R)] (default 0; --nv-sa: [N*R, N], default 1)
  --random-ids                     token ids as the prompt (no tokenizer; completions endpoint only)
  --random-vocab-size V            ids drawn below V (default 32000)
  --nv-sa                          the SemiAnalysis client of use_nv_sa_benchmark: token ids, its length
                                   semantics, its result block, then \`Total failed requests: N\`
  --num-prompts N                  requests to send (default 1000)
  --max-concurrency C              requests in flight at most (default: all at once)
  --request-rate inf               the only rate: no pacing
  --seed S                         prompt seed (default: random, printed)
  --ignore-eos                     send ignore_eos: true
  --percentile-metrics LIST        sections to print (default ttft,tpot,itl,e2el)
  --metric-percentiles LIST        percentiles per section (default 99)
  --save-result [FILE]             write all numbers as JSON (without FILE: --result-dir/--result-filename)
  --save-detailed                  include per-request arrays in the JSON
  --request-timeout S              per-request limit in seconds (default 21600)
  ${[...ignoredFlags, ...[...ignoredWithValue].map((o) => `${o} X`)].join(' ')}
                                   benchmark_serving's, accepted and announced on stderr: no effect here
Exit code: 0 when the benchmark ran (failed requests are in the block), 2 on bad arguments,
1 when the result could not be produced or saved.`;
