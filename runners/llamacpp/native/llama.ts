// libllama (llama.cpp's C library) through koffi, as the npm package @node-llama-cpp/linux-x64
// ships it prebuilt, or a build of its own (LLAMA_CPP_LIB_DIR: a folder holding libllama.so and
// libggml*.so, e.g. a CUDA build). Declares the C prototypes this engine uses and turns every
// failed call into an error naming the call.
//
// llama_model_params and llama_context_params are passed by value and change layout between
// llama.cpp versions: they are handled as opaque blobs (larger than any version's struct: a larger
// blob passed in memory or returned through a hidden pointer is harmless on x86-64), only the
// fields below are written, and each is read back from the created context so that a library of
// another layout is refused instead of misread.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import { DisaggBenchError } from '../../common/errors.ts';

export class LlamaError extends DisaggBenchError {
  override name = 'LlamaError';
}

/** The prebuilt package this binding loads by default (pinned in package.json). */
export const LLAMA_PACKAGE = '@node-llama-cpp/linux-x64';

/** Offsets in llama_context_params of the build this binding was written against (checked after each context is made). */
const CONTEXT_FIELDS = { n_ctx: 0, n_batch: 4, n_ubatch: 8, n_seq_max: 12, n_threads: 28, n_threads_batch: 32 } as const;
const PARAMS_BYTES = 1024;

type Fn = (...args: unknown[]) => unknown;

export interface LlamaBatch {
  n_tokens: number;
  token: bigint;
  embd: bigint | null;
  pos: bigint;
  n_seq_id: bigint;
  seq_id: bigint;
  logits: bigint;
}

export interface LlamaLibrary {
  /** The folder the libraries came from. */
  dir: string;
  /** Devices of ggml's backends that are GPUs (0 in a CPU-only build). */
  gpuDevices: number;
  loadModel(file: string, gpuLayers?: number): bigint;
  freeModel(model: bigint): void;
  createContext(model: bigint, options: { nCtx: number; nBatch: number; nSeqMax: number; threads: number }): bigint;
  freeContext(ctx: bigint): void;
  vocabSize(model: bigint): number;
  /** The end-of-generation token (llama_vocab_eos). */
  eosToken(model: bigint): number;
  batchInit(capacity: number): LlamaBatch;
  batchFree(batch: LlamaBatch): void;
  /** llama_decode; refuses every non-zero return with what llama.cpp means by it. */
  decode(ctx: bigint, batch: LlamaBatch): void;
  greedy(): bigint;
  sample(sampler: bigint, ctx: bigint, index: number): number;
  seqRemove(ctx: bigint, seq: number): void;
  stateSize(ctx: bigint, seq: number): number;
  /** Copies the sequence's state to `dst` (an address); returns the bytes written. */
  stateGet(ctx: bigint, dst: bigint, size: number, seq: number): number;
  /** Restores a sequence's state from `src` (an address). */
  stateSet(ctx: bigint, src: bigint, size: number, seq: number): void;
}

function defaultDir(): string {
  const entry = fileURLToPath(import.meta.resolve(LLAMA_PACKAGE));
  return path.join(path.dirname(entry), '..', 'bins', 'linux-x64');
}

function libraryDir(): string {
  const given = process.env.LLAMA_CPP_LIB_DIR;
  if (given) return given;
  try {
    return defaultDir();
  } catch {
    throw new LlamaError(`llama.cpp's library is not installed: the npm package ${LLAMA_PACKAGE} is missing (run npm ci on linux x64), and LLAMA_CPP_LIB_DIR names no build of its own`);
  }
}

/** The soname of a library in `dir`: exact, or its versioned file (libllama.v0.4.0.so). */
function libraryFile(dir: string, stem: string): string {
  const names = existsSync(dir) ? readdirSync(dir) : [];
  const found = names.find((n) => n === `${stem}.so`) ?? names.find((n) => n.startsWith(`${stem}.`) && n.endsWith('.so') && !n.startsWith(`${stem}-`));
  if (!found) throw new LlamaError(`no ${stem}.so in ${dir}`, { expected: 'a llama.cpp build (LLAMA_CPP_LIB_DIR) or the npm package\'s bins folder' });
  return path.join(dir, found);
}

let loaded: LlamaLibrary | undefined;

export function llama(): LlamaLibrary {
  loaded ??= bind(libraryDir());
  return loaded;
}

function bind(dir: string): LlamaLibrary {
  const ggml = koffi.load(libraryFile(dir, 'libggml'));
  const lib = koffi.load(libraryFile(dir, 'libllama'));
  // The CPU (and GPU) backends are plugins next to libggml: load every one found there.
  (ggml.func('void ggml_backend_load_all_from_path(const char *dir)') as Fn)(dir);
  const devCount = ggml.func('size_t ggml_backend_dev_count(void)') as Fn;
  const devGet = ggml.func('void *ggml_backend_dev_get(size_t index)') as Fn;
  // enum ggml_backend_dev_type: CPU 0, GPU 1, IGPU 2, ACCEL 3.
  const devType = ggml.func('int ggml_backend_dev_type(void *device)') as Fn;
  let gpuDevices = 0;
  for (let i = 0; i < Number(devCount()); i++) if ([1, 2].includes(devType(devGet(i)) as number)) gpuDevices++;
  (lib.func('void llama_backend_init(void)') as Fn)();

  const Params = koffi.struct('llama_params_blob', { bytes: koffi.array('uint8_t', PARAMS_BYTES) });
  const Batch = koffi.struct('llama_batch', {
    n_tokens: 'int32_t', token: 'void *', embd: 'void *', pos: 'void *', n_seq_id: 'void *', seq_id: 'void *', logits: 'void *',
  });
  const f = (proto: string) => lib.func(proto) as Fn;
  const fn = {
    modelDefaults: lib.func('llama_model_default_params', Params, []) as Fn,
    contextDefaults: lib.func('llama_context_default_params', Params, []) as Fn,
    loadModel: lib.func('llama_model_load_from_file', 'void *', ['const char *', Params]) as Fn,
    freeModel: f('void llama_model_free(void *model)'),
    initFromModel: lib.func('llama_init_from_model', 'void *', ['void *', Params]) as Fn,
    free: f('void llama_free(void *ctx)'),
    modelVocab: f('void *llama_model_get_vocab(void *model)'),
    vocabNTokens: f('int32_t llama_vocab_n_tokens(void *vocab)'),
    vocabEos: f('int32_t llama_vocab_eos(void *vocab)'),
    nCtx: f('uint32_t llama_n_ctx(void *ctx)'),
    nBatch: f('uint32_t llama_n_batch(void *ctx)'),
    nSeqMax: f('uint32_t llama_n_seq_max(void *ctx)'),
    nThreads: f('int32_t llama_n_threads(void *ctx)'),
    batchInit: lib.func('llama_batch_init', Batch, ['int32_t', 'int32_t', 'int32_t']) as Fn,
    batchFree: lib.func('llama_batch_free', 'void', [Batch]) as Fn,
    decode: lib.func('llama_decode', 'int32_t', ['void *', Batch]) as Fn,
    greedy: f('void *llama_sampler_init_greedy(void)'),
    sample: f('int32_t llama_sampler_sample(void *smpl, void *ctx, int32_t idx)'),
    memory: f('void *llama_get_memory(void *ctx)'),
    seqRm: f('bool llama_memory_seq_rm(void *mem, int32_t seq, int32_t p0, int32_t p1)'),
    stateSize: f('size_t llama_state_seq_get_size(void *ctx, int32_t seq)'),
    stateGet: f('size_t llama_state_seq_get_data(void *ctx, uint64_t dst, size_t size, int32_t seq)'),
    stateSet: f('size_t llama_state_seq_set_data(void *ctx, uint64_t src, size_t size, int32_t seq)'),
  };

  const setU32 = (blob: { bytes: number[] | Uint8Array }, offset: number, value: number) => {
    const bytes = Buffer.from(blob.bytes as Uint8Array);
    bytes.writeUInt32LE(value, offset);
    return { bytes };
  };

  return {
    dir,
    gpuDevices,
    loadModel(file, gpuLayers) {
      let params = fn.modelDefaults() as { bytes: Uint8Array };
      // n_gpu_layers follows two pointers in llama_model_params.
      if (gpuLayers !== undefined) params = setU32(params, 16, gpuLayers >>> 0);
      const model = fn.loadModel(file, params) as bigint | null;
      if (!model) throw new LlamaError(`llama_model_load_from_file failed for ${file} (llama.cpp's log above says why)`);
      return model;
    },
    freeModel: (model) => void fn.freeModel(model),
    createContext(model, o) {
      let params = fn.contextDefaults() as { bytes: Uint8Array };
      const wanted = { n_ctx: o.nCtx, n_batch: o.nBatch, n_ubatch: o.nBatch, n_seq_max: o.nSeqMax, n_threads: o.threads, n_threads_batch: o.threads };
      for (const [field, value] of Object.entries(wanted)) params = setU32(params, CONTEXT_FIELDS[field as keyof typeof CONTEXT_FIELDS], value);
      const ctx = fn.initFromModel(model, params) as bigint | null;
      if (!ctx) throw new LlamaError('llama_init_from_model failed (llama.cpp\'s log above says why)');
      const got = { n_batch: fn.nBatch(ctx), n_seq_max: fn.nSeqMax(ctx), n_threads: fn.nThreads(ctx) };
      if (got.n_batch !== o.nBatch || got.n_seq_max !== o.nSeqMax || got.n_threads !== o.threads) {
        fn.free(ctx);
        throw new LlamaError(
          `libllama in ${dir} lays out llama_context_params otherwise than this binding declares (asked n_batch ${o.nBatch}, n_seq_max ${o.nSeqMax}, threads ${o.threads}; the context has ${got.n_batch}, ${got.n_seq_max}, ${got.n_threads})`,
          { expected: `the build of ${LLAMA_PACKAGE} pinned in package.json` },
        );
      }
      if ((fn.nCtx(ctx) as number) < o.nCtx) {
        fn.free(ctx);
        throw new LlamaError(`llama_init_from_model gave a context of ${fn.nCtx(ctx)} tokens, fewer than the ${o.nCtx} asked`);
      }
      return ctx;
    },
    freeContext: (ctx) => void fn.free(ctx),
    vocabSize: (model) => fn.vocabNTokens(fn.modelVocab(model)) as number,
    eosToken: (model) => fn.vocabEos(fn.modelVocab(model)) as number,
    batchInit: (capacity) => fn.batchInit(capacity, 0, 1) as LlamaBatch,
    batchFree: (batch) => void fn.batchFree(batch),
    decode(ctx, batch) {
      const rc = fn.decode(ctx, batch) as number;
      if (rc === 0) return;
      const why = rc === 1 ? 'no KV cache slot for the batch (the context is full)' : rc === 2 ? 'aborted' : rc === -1 ? 'invalid batch' : 'error while computing';
      throw new LlamaError(`llama_decode failed: ${why} (code ${rc})`);
    },
    greedy: () => fn.greedy() as bigint,
    sample: (sampler, ctx, index) => fn.sample(sampler, ctx, index) as number,
    seqRemove(ctx, seq) {
      if (!fn.seqRm(fn.memory(ctx), seq, -1, -1)) throw new LlamaError(`llama_memory_seq_rm failed for sequence ${seq}`);
    },
    stateSize: (ctx, seq) => Number(fn.stateSize(ctx, seq)),
    stateGet(ctx, dst, size, seq) {
      const n = Number(fn.stateGet(ctx, dst, size, seq));
      if (n === 0) throw new LlamaError(`llama_state_seq_get_data wrote nothing for sequence ${seq} (${size} bytes of room)`);
      return n;
    },
    stateSet(ctx, src, size, seq) {
      const n = Number(fn.stateSet(ctx, src, size, seq));
      if (n !== size) throw new LlamaError(`llama_state_seq_set_data refused the ${size} bytes handed over for sequence ${seq} (read ${n}): not a state of this model and context`);
    },
  };
}
