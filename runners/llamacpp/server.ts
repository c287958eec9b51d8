// `disagg-bench llama-server`: one OpenAI-compatible streaming server on llama.cpp, in one of three
// roles: `agg` (prefill and decode here), `ctx` (prefill only: the request's state waits in this
// server's hand-over region until a generation server has read it) or `gen` (reads a context
// server's state through the transfer engine, loads it and decodes). /health answers 503 until
// the model is loaded and, in a deployment, every server has joined the transfer world.
import http from 'node:http';
import { readArgs } from '../common/args/read-args.ts';
import { UsageError } from '../common/errors.ts';
import { readClusterFile, kvRank, type ClusterFile } from './cluster-file.ts';
import { handoverBackend, KvLink } from './kv-link.ts';
import { LlamaRuntime } from './llama-runtime.ts';
import { resolveModel } from './model-file.ts';
import { ServeLoop } from './serve-loop.ts';
import { readWorkerOptions, type WorkerOptions } from './worker-options.ts';
import { handleCompletion, type ServerState } from './server-requests.ts';
import { keepConnections, readBody, sendError, sendJson } from './http-json.ts';

export const usage = `usage: disagg-bench llama-server --role agg|ctx|gen --model PATH|dummy:SHAPE [--host H] [--port P]
                                 [--config WORKER.yaml] [--cluster DEPLOYMENT.yaml] [--index N]

An OpenAI-compatible server (/v1/completions, /v1/chat/completions, /health, /v1/models) on
llama.cpp. --config: the worker config (max_batch_size, max_seq_len, max_num_tokens, n_threads,
n_gpu_layers); --cluster: the deployment file (roles ctx and gen: the servers, the KV hand-over).`;

export const args = {
  options: {
    role: { type: 'string' },
    model: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    config: { type: 'string' },
    cluster: { type: 'string' },
    index: { type: 'string' },
  },
} as const;

/** State bytes of a sequence of `tokens` tokens, from two measured prefills: a fixed part and a per-token part. */
function measureStateBytes(runtime: LlamaRuntime, tokens: number): number {
  const sizeOf = (n: number) => {
    runtime.prefill(0, Array.from({ length: n }, (_, i) => i % 256));
    const size = runtime.stateSize(0);
    runtime.release(0);
    return size;
  };
  const one = sizeOf(1);
  const perToken = sizeOf(2) - one;
  return Math.ceil((one + perToken * (tokens - 1)) / 4096) * 4096;
}

export interface ServerArgs {
  role: 'agg' | 'ctx' | 'gen';
  model: string;
  host: string;
  port: number;
  config?: string;
  cluster?: string;
  index: number;
}

/** The command line, checked: one UsageError per word it cannot take. */
export function parseServerArgs(argv: string[]): ServerArgs {
  const { values } = readArgs(argv, args);
  const role = values.role;
  if (role !== 'agg' && role !== 'ctx' && role !== 'gen') throw new UsageError(`--role ${role ?? '(missing)'}: expected agg, ctx or gen`);
  if (!values.model) throw new UsageError('--model is required: a GGUF file or dummy:<shape>');
  if (role !== 'agg' && !values.cluster) throw new UsageError(`--role ${role} needs --cluster, the deployment file`);
  const number = (name: 'port' | 'index', fallback: number) => {
    const n = Number(values[name] ?? fallback);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} ${values[name]}: expected a whole number`);
    return n;
  };
  return { role, model: values.model, host: values.host ?? '127.0.0.1', port: number('port', 8000), config: values.config, cluster: values.cluster, index: number('index', 0) };
}

export async function run(argv: string[]): Promise<number> {
  const values = parseServerArgs(argv);
  const { role, index } = values;
  const options = readWorkerOptions(values.config);
  const cluster: ClusterFile | undefined = values.cluster ? readClusterFile(values.cluster) : undefined;
  // Checked before anything listens: a model that cannot be served ends the server in one sentence.
  const model = resolveModel(values.model);

  const state: ServerState = { role, ready: false, modelName: values.model, handovers: 0 };
  const server = http.createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && url === '/health') return sendJson(res, state.ready ? 200 : 503, { status: state.ready ? 'ok' : 'loading' });
    if (req.method === 'GET' && url === '/v1/models') return sendJson(res, 200, { object: 'list', data: [{ id: state.modelName, object: 'model', owned_by: 'disagg-bench' }] });
    if (req.method === 'POST' && url === '/kv/release' && state.link) {
      return void readBody(req).then((body) => {
        state.releaseSlot?.(Number(JSON.parse(body).offset));
        sendJson(res, 200, { released: true });
      });
    }
    if (req.method === 'POST' && (url === '/v1/completions' || url === '/v1/chat/completions')) {
      if (!state.ready) return sendError(res, 503, 'the server is still loading');
      return void handleCompletion(state, url === '/v1/chat/completions' ? 'chat' : 'completions', req, res);
    }
    sendError(res, 404, `no route ${req.method} ${url}`);
  });
  const { host, port } = values;
  keepConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  console.log(`llama-server ${role}${role === 'agg' ? '' : `_${index}`} listening on ${host}:${port}`);

  // Stopping never waits on peers that are gone: the transfer world gets 2 s to close.
  const stop = async (code: number) => {
    server.close();
    server.closeAllConnections();
    await Promise.race([state.link?.close(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop(143));
  process.on('SIGINT', () => void stop(130));

  try {
    await serve(state, model.file, options, cluster, role, index);
  } catch (err) {
    server.close();
    server.closeAllConnections();
    await state.link?.close();
    throw err;
  }
  console.log('READY');
  return await new Promise<number>(() => {});
}

/** Loads the model and, in a deployment, joins the transfer world; then the server is ready. */
async function serve(state: ServerState, file: string, options: WorkerOptions, cluster: ClusterFile | undefined, role: 'agg' | 'ctx' | 'gen', index: number): Promise<void> {
  const runtime = new LlamaRuntime(file, {
    slots: options.max_batch_size,
    maxSeqLen: options.max_seq_len,
    batch: options.max_num_tokens,
    threads: options.n_threads,
    gpuLayers: options.n_gpu_layers,
  });
  state.runtime = runtime;
  state.loop = new ServeLoop(runtime);
  console.log(`model ${file} (vocab ${runtime.vocab}), ${options.max_batch_size} sequences of ${options.max_seq_len} tokens, ${options.n_threads} threads`);
  if (cluster && role !== 'agg') {
    const slotBytes = measureStateBytes(runtime, options.max_seq_len);
    // A context server keeps a state until its generation server has read it: twice its sequences.
    const slots = role === 'ctx' ? 2 * options.max_batch_size : options.max_batch_size;
    const rank = kvRank(cluster, role, index);
    const self = (role === 'ctx' ? cluster.context_servers : cluster.generation_servers)[index];
    if (!self) throw new UsageError(`--index ${index}: the deployment file has no ${role} server ${index}`);
    console.log(`joining the KV transfer world as rank ${rank} (${handoverBackend(cluster, self.url).backend}), ${slots} slots of ${slotBytes} bytes`);
    state.link = await KvLink.open(cluster, rank, self.url, slots, slotBytes);
    state.rank = rank;
    state.freeSlots = Array.from({ length: slots }, (_, i) => i);
    state.slotWaiters = [];
    state.releaseSlot = (offset: number) => {
      const slot = Math.round(offset / state.link!.slotBytes);
      state.freeSlots!.push(slot);
      state.slotWaiters!.shift()?.();
    };
  }
  state.ready = true;
}
