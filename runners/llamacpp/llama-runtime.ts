// One model and one llama.cpp context serving up to `slots` sequences at once: prefill of a prompt
// (in chunks of the context's batch), one batched decode step over the running sequences, and a
// sequence's state (its KV cache) out to and in from memory, the bytes the hand-over moves.
import koffi from 'koffi';
import { llama, LlamaError, type LlamaBatch, type LlamaLibrary } from './native/llama.ts';

export interface RuntimeOptions {
  /** Sequences served at once (llama.cpp's n_seq_max). */
  slots: number;
  /** Tokens one sequence may hold: prompt and output. */
  maxSeqLen: number;
  /** Tokens per llama_decode call of a prefill. */
  batch: number;
  threads: number;
  /** Layers on the GPU (a GPU build only; default: llama.cpp's). */
  gpuLayers?: number;
}

/** One sequence's next token in a decode step. */
export interface StepItem {
  seq: number;
  token: number;
  pos: number;
}

export class LlamaRuntime {
  readonly vocab: number;
  readonly eos: number;
  private readonly lib: LlamaLibrary;
  private readonly model: bigint;
  private readonly ctx: bigint;
  private readonly batch: LlamaBatch;
  private readonly sampler: bigint;
  private readonly views: { token: Int32Array; pos: Int32Array; nSeq: Int32Array; logits: Int8Array; seq: Int32Array[] };

  constructor(modelFile: string, readonly options: RuntimeOptions) {
    this.lib = llama();
    if (options.gpuLayers !== undefined && options.gpuLayers !== 0 && this.lib.gpuDevices === 0) {
      throw new LlamaError(`n_gpu_layers ${options.gpuLayers} asks for a GPU, but the llama.cpp library in ${this.lib.dir} has no GPU backend`, {
        expected: 'LLAMA_CPP_LIB_DIR naming a CUDA build (scripts/build-llama-cuda.sh), or n_gpu_layers 0',
      });
    }
    this.model = this.lib.loadModel(modelFile, options.gpuLayers);
    this.vocab = this.lib.vocabSize(this.model);
    this.eos = this.lib.eosToken(this.model);
    this.ctx = this.lib.createContext(this.model, {
      nCtx: options.slots * options.maxSeqLen,
      nBatch: Math.max(options.batch, options.slots),
      nSeqMax: options.slots,
      threads: options.threads,
    });
    const capacity = Math.max(options.batch, options.slots);
    this.batch = this.lib.batchInit(capacity);
    this.sampler = this.lib.greedy();
    const b = this.batch;
    this.views = {
      token: new Int32Array(koffi.view(b.token, 4 * capacity)),
      pos: new Int32Array(koffi.view(b.pos, 4 * capacity)),
      nSeq: new Int32Array(koffi.view(b.n_seq_id, 4 * capacity)),
      logits: new Int8Array(koffi.view(b.logits, capacity)),
      seq: Array.from({ length: capacity }, (_, i) => new Int32Array(koffi.view(koffi.decode(b.seq_id, 8 * i, 'void *') as bigint, 4))),
    };
  }

  /** Decodes the items as one batch; the greedy next token of each item marked for output. */
  private run(items: StepItem[], outputs: boolean[]): number[] {
    const v = this.views;
    for (let i = 0; i < items.length; i++) {
      v.token[i] = items[i].token;
      v.pos[i] = items[i].pos;
      v.nSeq[i] = 1;
      v.seq[i][0] = items[i].seq;
      v.logits[i] = outputs[i] ? 1 : 0;
    }
    this.batch.n_tokens = items.length;
    this.lib.decode(this.ctx, this.batch);
    const next: number[] = [];
    for (let i = 0; i < items.length; i++) if (outputs[i]) next.push(this.lib.sample(this.sampler, this.ctx, i));
    return next;
  }

  /** Fills sequence `seq` with the prompt; returns the first generated token. */
  prefill(seq: number, tokens: readonly number[]): number {
    if (tokens.length === 0) throw new LlamaError('a prompt of no tokens');
    if (tokens.length >= this.options.maxSeqLen) throw new LlamaError(`a prompt of ${tokens.length} tokens leaves no room in a sequence of ${this.options.maxSeqLen}`);
    const bad = tokens.find((t) => !Number.isInteger(t) || t < 0 || t >= this.vocab);
    if (bad !== undefined) throw new LlamaError(`token id ${bad} is outside the model's vocabulary of ${this.vocab}`);
    let first = -1;
    for (let start = 0; start < tokens.length; start += this.options.batch) {
      const chunk = tokens.slice(start, start + this.options.batch).map((token, i) => ({ seq, token, pos: start + i }));
      const last = start + chunk.length === tokens.length;
      const out = this.run(chunk, chunk.map((_, i) => last && i === chunk.length - 1));
      if (last) first = out[0];
    }
    return first;
  }

  /** One decode step over running sequences (one token each, at most `slots`); their next tokens. */
  step(items: StepItem[]): number[] {
    return this.run(items, items.map(() => true));
  }

  /** Frees a sequence's cells. */
  release(seq: number): void {
    this.lib.seqRemove(this.ctx, seq);
  }

  stateSize(seq: number): number {
    return this.lib.stateSize(this.ctx, seq);
  }

  /** Writes a sequence's state at `address` (room for `capacity` bytes); returns its length. */
  exportState(seq: number, address: bigint, capacity: number): number {
    const size = this.stateSize(seq);
    if (size > capacity) throw new LlamaError(`the state of sequence ${seq} is ${size} bytes, more than the ${capacity} bytes of its hand-over slot`);
    return this.lib.stateGet(this.ctx, address, size, seq);
  }

  /** Loads a state of `length` bytes at `address` into sequence `seq` (emptied first). */
  importState(seq: number, address: bigint, length: number): void {
    this.release(seq);
    this.lib.stateSet(this.ctx, address, length, seq);
  }

  close(): void {
    this.lib.batchFree(this.batch);
    this.lib.freeContext(this.ctx);
    this.lib.freeModel(this.model);
  }
}
