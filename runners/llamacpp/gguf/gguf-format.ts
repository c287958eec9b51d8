// The GGUF file format as far as this project writes and checks it (version 3): the magic, the
// metadata value types, the tensor types it uses, and the data alignment.
export const GGUF_MAGIC = 0x46554747; // "GGUF", little-endian
export const GGUF_VERSION = 3;
/** general.alignment's default: tensor data starts on, and each tensor is padded to, this many bytes. */
export const GGUF_ALIGNMENT = 32;

/** Metadata value types (gguf_type). */
export const GgufType = {
  UINT8: 0, INT8: 1, UINT16: 2, INT16: 3, UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9, UINT64: 10, INT64: 11, FLOAT64: 12,
} as const;

/** Tensor types (ggml_type) this project writes, with their bytes per element. */
export const TensorType = { F32: 0, F16: 1 } as const;
export type TensorTypeName = keyof typeof TensorType;
export const tensorTypeBytes: Record<TensorTypeName, number> = { F32: 4, F16: 2 };

/** Bytes of one element of each fixed-size metadata type. */
export const scalarBytes: Partial<Record<number, number>> = {
  [GgufType.UINT8]: 1, [GgufType.INT8]: 1, [GgufType.UINT16]: 2, [GgufType.INT16]: 2, [GgufType.UINT32]: 4,
  [GgufType.INT32]: 4, [GgufType.FLOAT32]: 4, [GgufType.BOOL]: 1, [GgufType.UINT64]: 8, [GgufType.INT64]: 8, [GgufType.FLOAT64]: 8,
};

export function alignUp(n: number, alignment = GGUF_ALIGNMENT): number {
  return Math.ceil(n / alignment) * alignment;
}
