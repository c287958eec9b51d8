// Writes a GGUF file (version 3): metadata, tensor infos, then each tensor's data, streamed to the
// file in chunks so that a model of billions of weights never sits in memory whole.
import { closeSync, openSync, writeSync } from 'node:fs';
import { GGUF_MAGIC, GGUF_VERSION, GgufType, TensorType, alignUp, tensorTypeBytes, type TensorTypeName } from './gguf-format.ts';

export type MetadataValue =
  | { u32: number }
  | { f32: number }
  | { bool: boolean }
  | { string: string }
  | { strings: string[] }
  | { i32s: ArrayLike<number> };

export interface TensorSpec {
  name: string;
  /** ggml's order: the fastest-varying dimension first (a [rows x cols] matrix is [cols, rows]). */
  dims: number[];
  type: TensorTypeName;
  /** Fills `out` (elements [start, start + out.length) of the tensor) with its values. */
  fill(out: Uint16Array | Float32Array, start: number): void;
}

/** Writes chunks through one descriptor, buffered. */
class FileSink {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(1 << 22);
  private used = 0;
  written = 0;
  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }
  bytes(data: Uint8Array): void {
    if (this.used + data.length > this.buffer.length) this.flush();
    if (data.length > this.buffer.length) writeSync(this.fd, data);
    else {
      this.buffer.set(data, this.used);
      this.used += data.length;
    }
    this.written += data.length;
  }
  u32(v: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(v);
    this.bytes(b);
  }
  u64(v: number): void {
    const b = Buffer.allocUnsafe(8);
    b.writeBigUInt64LE(BigInt(v));
    this.bytes(b);
  }
  string(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.bytes(b);
  }
  pad(alignment: number): void {
    const n = alignUp(this.written, alignment) - this.written;
    if (n > 0) this.bytes(new Uint8Array(n));
  }
  flush(): void {
    if (this.used > 0) writeSync(this.fd, this.buffer, 0, this.used);
    this.used = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

function writeValue(sink: FileSink, value: MetadataValue): void {
  if ('u32' in value) {
    sink.u32(GgufType.UINT32);
    sink.u32(value.u32);
  } else if ('f32' in value) {
    sink.u32(GgufType.FLOAT32);
    const b = Buffer.allocUnsafe(4);
    b.writeFloatLE(value.f32);
    sink.bytes(b);
  } else if ('bool' in value) {
    sink.u32(GgufType.BOOL);
    sink.bytes(Uint8Array.of(value.bool ? 1 : 0));
  } else if ('string' in value) {
    sink.u32(GgufType.STRING);
    sink.string(value.string);
  } else if ('strings' in value) {
    sink.u32(GgufType.ARRAY);
    sink.u32(GgufType.STRING);
    sink.u64(value.strings.length);
    for (const s of value.strings) sink.string(s);
  } else {
    sink.u32(GgufType.ARRAY);
    sink.u32(GgufType.INT32);
    sink.u64(value.i32s.length);
    const b = Buffer.allocUnsafe(4 * value.i32s.length);
    for (let i = 0; i < value.i32s.length; i++) b.writeInt32LE(value.i32s[i], 4 * i);
    sink.bytes(b);
  }
}

const elementsOf = (t: TensorSpec) => t.dims.reduce((a, b) => a * b, 1);

/** Writes `path` (replacing it); returns its size in bytes. */
export function writeGguf(path: string, metadata: Array<[string, MetadataValue]>, tensors: TensorSpec[], alignment: number): number {
  const sink = new FileSink(path);
  try {
    sink.u32(GGUF_MAGIC);
    sink.u32(GGUF_VERSION);
    sink.u64(tensors.length);
    sink.u64(metadata.length);
    for (const [key, value] of metadata) {
      sink.string(key);
      writeValue(sink, value);
    }
    let offset = 0;
    for (const t of tensors) {
      sink.string(t.name);
      sink.u32(t.dims.length);
      for (const d of t.dims) sink.u64(d);
      sink.u32(TensorType[t.type]);
      sink.u64(offset);
      offset = alignUp(offset + elementsOf(t) * tensorTypeBytes[t.type], alignment);
    }
    sink.pad(alignment);
    const chunk = 1 << 20;
    for (const t of tensors) {
      const total = elementsOf(t);
      for (let start = 0; start < total; start += chunk) {
        const n = Math.min(chunk, total - start);
        const out = t.type === 'F16' ? new Uint16Array(n) : new Float32Array(n);
        t.fill(out, start);
        sink.bytes(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
      }
      sink.pad(alignment);
    }
  } finally {
    sink.close();
  }
  return sink.written;
}
