// A llamacpp server's options: its worker config (worker_config.ctx / .gen written as YAML by the
// job) read and checked, every key this engine does not know refused in one sentence.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parse } from 'yaml';
import { InputError } from '../common/errors.ts';

export interface WorkerOptions {
  /** Requests served at once (sequences of the context). */
  max_batch_size: number;
  /** Tokens of one request: prompt and output. */
  max_seq_len: number;
  /** Tokens per llama_decode of a prefill. */
  max_num_tokens: number;
  /** CPU threads of llama.cpp. */
  n_threads: number;
  /** Layers on the GPU in a GPU build (default: all). */
  n_gpu_layers?: number;
  /** Parallelism keys the job reads for placement: this engine runs one process per server, so 1. */
  tensor_parallel_size?: number;
  pipeline_parallel_size?: number;
  context_parallel_size?: number;
}

export const WORKER_DEFAULTS = { max_batch_size: 4, max_seq_len: 2048, max_num_tokens: 512 };
const PARALLEL = ['tensor_parallel_size', 'pipeline_parallel_size', 'context_parallel_size'] as const;
export const WORKER_KEYS = new Set(['max_batch_size', 'max_seq_len', 'max_num_tokens', 'n_threads', 'n_gpu_layers', ...PARALLEL]);

export function readWorkerOptions(file: string | undefined): WorkerOptions {
  const given = (file ? (parse(readFileSync(file, 'utf8')) ?? {}) : {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!WORKER_KEYS.has(key)) throw new InputError(`worker_config key "${key}" means nothing to the llamacpp engine`, { file, place: key, expected: [...WORKER_KEYS].join(', ') });
  }
  for (const key of PARALLEL) {
    if (given[key] !== undefined && given[key] !== 1) throw new InputError(`${key} ${given[key]}: a llamacpp server is one process`, { file, place: key, expected: '1' });
  }
  const options = { ...WORKER_DEFAULTS, n_threads: Math.max(1, Math.floor(os.availableParallelism() / 2)), ...given } as WorkerOptions;
  for (const key of ['max_batch_size', 'max_seq_len', 'max_num_tokens', 'n_threads'] as const) {
    if (!Number.isInteger(options[key]) || options[key] < 1) throw new InputError(`${key} must be a whole number of at least 1, not ${JSON.stringify(options[key])}`, { file, place: key });
  }
  return options;
}
