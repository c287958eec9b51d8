// A GGUF of a named shape with seeded random weights and a byte-level vocabulary, written once per
// (shape, seed) into a cache folder and reused: the servers of a job, and later runs, load the same
// file. Weights are F16 of magnitude 1/32 to 1/8 with random signs: large enough that greedy
// decoding does not settle on one token (it did at 1/128), small enough that 28 layers stay finite
// in F16; norms are 1.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InputError } from '../../common/errors.ts';
import { writeGguf, type MetadataValue, type TensorSpec } from './gguf-write.ts';
import { GGUF_ALIGNMENT } from './gguf-format.ts';
import { modelShapes, type ModelShape } from '../shapes.ts';
import { byteTokenTexts, BOS_TOKEN, EOS_TOKEN } from '../byte-vocab.ts';

/** Bumped when the written file changes, so a cache never serves an older layout. */
const LAYOUT_VERSION = 1;

export function modelCacheDir(): string {
  return process.env.DISAGG_MODEL_CACHE ?? path.join(os.homedir(), '.cache', 'disagg-bench', 'models');
}

/** Seeded F16 values: xorshift32, two halves per draw, exponent 10 or 11 (1/32..1/8), random sign. */
function randomHalves(seed: number): TensorSpec['fill'] {
  return (out, start) => {
    let s = (seed ^ Math.imul(start + 1, 0x9e3779b1)) >>> 0 || 1;
    const halves = out as Uint16Array;
    for (let i = 0; i < halves.length; i += 2) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const r = s >>> 0;
      halves[i] = (r & 0x83ff) | ((10 + ((r >>> 10) & 1)) << 10);
      if (i + 1 < halves.length) halves[i + 1] = ((r >>> 16) & 0x83ff) | ((10 + ((r >>> 26) & 1)) << 10);
    }
  };
}

const ones: TensorSpec['fill'] = (out) => (out as Float32Array).fill(1);

function tensorsOf(shape: ModelShape, seed: number): TensorSpec[] {
  let n = 0;
  const matrix = (name: string, cols: number, rows: number): TensorSpec => ({ name, dims: [cols, rows], type: 'F16', fill: randomHalves(seed * 7919 + ++n) });
  const norm = (name: string, size: number): TensorSpec => ({ name, dims: [size], type: 'F32', fill: ones });
  const q = shape.heads * shape.headDim;
  const kv = shape.kvHeads * shape.headDim;
  // No output.weight: the output projection is tied to the embeddings, as in both named models.
  const tensors = [matrix('token_embd.weight', shape.hidden, shape.vocab), norm('output_norm.weight', shape.hidden)];
  for (let l = 0; l < shape.layers; l++) {
    const b = `blk.${l}`;
    tensors.push(
      norm(`${b}.attn_norm.weight`, shape.hidden),
      matrix(`${b}.attn_q.weight`, shape.hidden, q),
      matrix(`${b}.attn_k.weight`, shape.hidden, kv),
      matrix(`${b}.attn_v.weight`, shape.hidden, kv),
      matrix(`${b}.attn_output.weight`, q, shape.hidden),
      norm(`${b}.ffn_norm.weight`, shape.hidden),
      matrix(`${b}.ffn_gate.weight`, shape.hidden, shape.ffn),
      matrix(`${b}.ffn_up.weight`, shape.hidden, shape.ffn),
      matrix(`${b}.ffn_down.weight`, shape.ffn, shape.hidden),
    );
    if (shape.architecture === 'qwen3') tensors.push(norm(`${b}.attn_q_norm.weight`, shape.headDim), norm(`${b}.attn_k_norm.weight`, shape.headDim));
  }
  return tensors;
}

function metadataOf(name: string, shape: ModelShape): Array<[string, MetadataValue]> {
  const a = shape.architecture;
  const tokens = byteTokenTexts(shape.vocab);
  const types = new Int32Array(shape.vocab).fill(1);
  types[BOS_TOKEN] = 3;
  types[EOS_TOKEN] = 3;
  return [
    ['general.architecture', { string: a }],
    ['general.name', { string: `dummy ${name}` }],
    ['general.file_type', { u32: 1 }],
    ['general.alignment', { u32: GGUF_ALIGNMENT }],
    [`${a}.context_length`, { u32: shape.contextLength }],
    [`${a}.embedding_length`, { u32: shape.hidden }],
    [`${a}.block_count`, { u32: shape.layers }],
    [`${a}.feed_forward_length`, { u32: shape.ffn }],
    [`${a}.attention.head_count`, { u32: shape.heads }],
    [`${a}.attention.head_count_kv`, { u32: shape.kvHeads }],
    [`${a}.attention.key_length`, { u32: shape.headDim }],
    [`${a}.attention.value_length`, { u32: shape.headDim }],
    [`${a}.rope.dimension_count`, { u32: shape.headDim }],
    [`${a}.rope.freq_base`, { f32: shape.ropeTheta }],
    [`${a}.attention.layer_norm_rms_epsilon`, { f32: shape.rmsEps }],
    [`${a}.vocab_size`, { u32: shape.vocab }],
    ['tokenizer.ggml.model', { string: 'gpt2' }],
    ['tokenizer.ggml.pre', { string: 'default' }],
    ['tokenizer.ggml.tokens', { strings: tokens }],
    ['tokenizer.ggml.token_type', { i32s: types }],
    ['tokenizer.ggml.merges', { strings: [] }],
    ['tokenizer.ggml.bos_token_id', { u32: BOS_TOKEN }],
    ['tokenizer.ggml.eos_token_id', { u32: EOS_TOKEN }],
    ['tokenizer.ggml.add_bos_token', { bool: false }],
  ];
}

/** The cached GGUF of shape `name` (written first if missing); refuses an unknown shape in one sentence. */
export function dummyModel(name: string, seed = 0): string {
  const shape = modelShapes[name];
  if (!shape) {
    throw new InputError(`no dummy model shape is named "${name}"`, { place: 'environment.model_path', expected: `dummy:${Object.keys(modelShapes).join(', dummy:')}` });
  }
  const dir = modelCacheDir();
  const file = path.join(dir, `${name}-seed${seed}-v${LAYOUT_VERSION}.gguf`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  // Servers of one job may write the same file at once: each writes its own and renames it over.
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeGguf(temp, metadataOf(name, shape), tensorsOf(shape, seed), GGUF_ALIGNMENT);
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
  return file;
}
