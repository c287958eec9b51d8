// The GGUF a server loads: `dummy:<shape>` written (once, cached) from a named shape, or a file of
// the user's, checked before llama.cpp maps it.
import { checkGguf, type GgufHeader } from './gguf/gguf-check.ts';
import { dummyModel } from './gguf/dummy-model.ts';
import { shapeName } from './shapes.ts';

export function resolveModel(modelPath: string): { file: string; header: GgufHeader; dummy: boolean } {
  const shape = shapeName(modelPath);
  const file = shape !== undefined ? dummyModel(shape) : modelPath;
  return { file, header: checkGguf(file), dummy: shape !== undefined };
}
