// Reads a GGUF's header (metadata and tensor table) and refuses, in one sentence naming the file, a
// file this engine cannot serve before llama.cpp maps it: not a GGUF, of a version other than 2 or
// 3, cut off (its tensor data ends past the end of the file), or of an architecture that is not a
// decoder-only text model llama.cpp generates with.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { DisaggBenchError } from '../../common/errors.ts';
import { GGUF_ALIGNMENT, GGUF_MAGIC, GgufType, alignUp, scalarBytes } from './gguf-format.ts';

export class GgufError extends DisaggBenchError {
  override name = 'GgufError';
}

/** Architectures served: decoder-only text models of llama.cpp (general.architecture). */
export const SERVED_ARCHITECTURES = [
  'llama', 'qwen2', 'qwen3', 'qwen2moe', 'qwen3moe', 'mistral3', 'gemma', 'gemma2', 'gemma3', 'phi2', 'phi3', 'granite',
  'olmo', 'olmo2', 'deepseek', 'deepseek2', 'starcoder2', 'falcon', 'gpt2', 'stablelm', 'internlm2', 'minicpm', 'command-r', 'exaone',
];

/** ggml_type: [elements per block, bytes per block], for the size of each tensor's data. */
const TYPE_BLOCKS: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36], 10: [256, 84],
  11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292], 16: [256, 66], 17: [256, 74], 18: [256, 98],
  19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82], 23: [256, 136], 24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8],
  28: [1, 8], 29: [256, 56], 30: [1, 2], 34: [256, 54], 35: [256, 66], 39: [32, 17],
};

export interface GgufHeader {
  architecture: string;
  metadata: Map<string, unknown>;
  tensors: number;
  /** Where the tensor data must end (bytes from the file's start). */
  dataEnd: number;
  fileSize: number;
}

/** A bounded reader over the file's first bytes (the header), growing on demand. */
class HeaderReader {
  private buffer = Buffer.alloc(0);
  pos = 0;
  constructor(private readonly fd: number, private readonly file: string, readonly fileSize: number) {}
  private need(n: number): void {
    if (this.pos + n <= this.buffer.length) return;
    if (this.pos + n > this.fileSize) throw new GgufError(`${this.file} is cut off: its header ends past the file's ${this.fileSize} bytes`, { file: this.file });
    const size = Math.min(this.fileSize, Math.max(this.pos + n, this.buffer.length * 2, 1 << 20));
    const next = Buffer.alloc(size);
    readSync(this.fd, next, 0, size, 0);
    this.buffer = next;
  }
  u32(): number {
    this.need(4);
    const v = this.buffer.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): number {
    this.need(8);
    const v = Number(this.buffer.readBigUInt64LE(this.pos));
    this.pos += 8;
    return v;
  }
  string(): string {
    const n = this.u64();
    this.need(n);
    const s = this.buffer.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
  scalar(type: number): unknown {
    const bytes = scalarBytes[type];
    if (bytes === undefined) throw new GgufError(`${this.file} has a metadata value of unknown type ${type}: not a GGUF this engine reads`, { file: this.file });
    this.need(bytes);
    const at = this.pos;
    this.pos += bytes;
    if (type === GgufType.UINT32) return this.buffer.readUInt32LE(at);
    if (type === GgufType.INT32) return this.buffer.readInt32LE(at);
    if (type === GgufType.FLOAT32) return this.buffer.readFloatLE(at);
    if (type === GgufType.BOOL) return this.buffer[at] !== 0;
    return undefined;
  }
}

function readValue(r: HeaderReader, type: number): unknown {
  if (type === GgufType.STRING) return r.string();
  if (type !== GgufType.ARRAY) return r.scalar(type);
  const itemType = r.u32();
  const count = r.u64();
  if (itemType === GgufType.STRING) {
    for (let i = 0; i < count; i++) r.string();
    return { array: count };
  }
  const bytes = scalarBytes[itemType];
  if (bytes === undefined) throw new GgufError(`a metadata array of unknown type ${itemType}: not a GGUF this engine reads`);
  r.skip(bytes * count);
  return { array: count };
}

/** The header of a GGUF, or a GgufError saying in one sentence why the file cannot be served. */
export function checkGguf(file: string): GgufHeader {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    throw new GgufError(`cannot open the model ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { file, place: 'environment.model_path' });
  }
  try {
    const fileSize = fstatSync(fd).size;
    const r = new HeaderReader(fd, file, fileSize);
    if (fileSize < 24 || r.u32() !== GGUF_MAGIC) throw new GgufError(`${file} is not a GGUF file (no GGUF magic at its start)`, { file });
    const version = r.u32();
    if (version !== 2 && version !== 3) throw new GgufError(`${file} is GGUF version ${version}; llama.cpp reads versions 2 and 3`, { file });
    const tensors = r.u64();
    const kvs = r.u64();
    const metadata = new Map<string, unknown>();
    for (let i = 0; i < kvs; i++) {
      const key = r.string();
      metadata.set(key, readValue(r, r.u32()));
    }
    let dataEnd = 0;
    for (let i = 0; i < tensors; i++) {
      r.string();
      const dims = r.u32();
      let elements = 1;
      for (let d = 0; d < dims; d++) elements *= r.u64();
      const type = r.u32();
      const offset = r.u64();
      const block = TYPE_BLOCKS[type];
      dataEnd = Math.max(dataEnd, offset + (block ? (elements / block[0]) * block[1] : 0));
    }
    const alignment = (metadata.get('general.alignment') as number | undefined) ?? GGUF_ALIGNMENT;
    const dataStart = alignUp(r.pos, alignment);
    const end = dataStart + dataEnd;
    if (end > fileSize) throw new GgufError(`${file} is cut off: its tensors end at byte ${end} but the file has ${fileSize}`, { file });
    const architecture = metadata.get('general.architecture');
    if (typeof architecture !== 'string') throw new GgufError(`${file} names no general.architecture`, { file });
    if (!SERVED_ARCHITECTURES.includes(architecture)) {
      throw new GgufError(`${file} is a model of architecture "${architecture}", which the llamacpp engine does not serve`, { file, expected: `a decoder-only text model: ${SERVED_ARCHITECTURES.join(', ')}` });
    }
    return { architecture, metadata, tensors, dataEnd: end, fileSize };
  } finally {
    closeSync(fd);
  }
}
