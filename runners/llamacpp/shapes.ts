// The model shapes this engine writes dummy weights for (as vLLM's `--load-format dummy` and
// TensorRT-LLM's perf runs serve real architectures with random weights): a config names one as
// `environment.model_path: dummy:<shape>`. The numbers are the public configs of the models named.
export interface ModelShape {
  /** llama.cpp's architecture name (general.architecture). */
  architecture: 'llama' | 'qwen3';
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  ffn: number;
  vocab: number;
  contextLength: number;
  ropeTheta: number;
  rmsEps: number;
}

export const modelShapes: Record<string, ModelShape> = {
  // Small enough for a 2-core CPU: about 11 M weights, 22 MB.
  tiny: { architecture: 'llama', layers: 4, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, ffn: 768, vocab: 32000, contextLength: 4096, ropeTheta: 10000, rmsEps: 1e-5 },
  'qwen3-0.6b': { architecture: 'qwen3', layers: 28, hidden: 1024, heads: 16, kvHeads: 8, headDim: 128, ffn: 3072, vocab: 151936, contextLength: 40960, ropeTheta: 1e6, rmsEps: 1e-6 },
  'llama-3.2-1b': { architecture: 'llama', layers: 16, hidden: 2048, heads: 32, kvHeads: 8, headDim: 64, ffn: 8192, vocab: 128256, contextLength: 131072, ropeTheta: 500000, rmsEps: 1e-5 },
};

/** The prefix of a model path that names a shape instead of a file. */
export const DUMMY_PREFIX = 'dummy:';

/** The shape a model path names (`dummy:tiny`), or undefined for a file path. */
export function shapeName(modelPath: string): string | undefined {
  return modelPath.startsWith(DUMMY_PREFIX) ? modelPath.slice(DUMMY_PREFIX.length) : undefined;
}

/** Bytes of K and V that one token occupies in every layer's cache (F16 cache). */
export function kvBytesPerToken(shape: ModelShape): number {
  return shape.layers * 2 * shape.kvHeads * shape.headDim * 2;
}
