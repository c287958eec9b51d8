// The GGUF the llamacpp engine writes and checks: a dummy model of a named shape is written once
// and reused, reads back with its architecture and every tensor inside the file; a file cut off,
// of another architecture, or no GGUF at all is refused in one sentence naming the file, before
// llama.cpp maps it.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkGguf, GgufError } from '../../runners/llamacpp/gguf/gguf-check.ts';
import { dummyModel } from '../../runners/llamacpp/gguf/dummy-model.ts';
import { writeGguf } from '../../runners/llamacpp/gguf/gguf-write.ts';
import { resolveModel } from '../../runners/llamacpp/model-file.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'llamacpp-gguf-'));
process.env.DISAGG_MODEL_CACHE = path.join(scratch, 'models');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const oneLine = (err: unknown) => {
  expect(err).toBeInstanceOf(GgufError);
  const message = (err as Error).message;
  expect(message.split('\n')).toHaveLength(1);
  return message;
};
const refusal = (file: string) => {
  try {
    checkGguf(file);
  } catch (err) {
    return oneLine(err);
  }
  throw new Error(`${file} was accepted`);
};

it('writes a dummy model of a named shape once, reads back its architecture and tensors, and reuses the file', () => {
  const file = dummyModel('tiny');
  const header = checkGguf(file);
  expect(header.architecture).toBe('llama');
  expect(header.metadata.get('llama.block_count')).toBe(4);
  expect(header.tensors).toBe(2 + 4 * 9);
  expect(header.dataEnd).toBe(header.fileSize);
  const written = statSync(file).mtimeMs;
  expect(resolveModel('dummy:tiny')).toMatchObject({ file, dummy: true });
  expect(statSync(file).mtimeMs).toBe(written);
  expect(() => dummyModel('tiny-typo')).toThrow(/no dummy model shape is named "tiny-typo".*dummy:tiny, dummy:qwen3-0.6b, dummy:llama-3.2-1b/);
});

it('refuses a GGUF cut off, of an architecture it does not serve, or not a GGUF, in one sentence naming the file', () => {
  const cut = path.join(scratch, 'cut.gguf');
  copyFileSync(dummyModel('tiny'), cut);
  truncateSync(cut, statSync(cut).size - 1000);
  expect(refusal(cut)).toMatch(new RegExp(`^${cut} is cut off: its tensors end at byte \\d+ but the file has \\d+$`));
  // A header cut in the middle is refused the same way.
  truncateSync(cut, 200);
  expect(refusal(cut)).toContain(`${cut} is cut off`);

  const bert = path.join(scratch, 'bert.gguf');
  writeGguf(bert, [['general.architecture', { string: 'bert' }]], [{ name: 'x', dims: [4], type: 'F32', fill: (o) => (o as Float32Array).fill(0) }], 32);
  expect(refusal(bert)).toMatch(new RegExp(`^${bert} is a model of architecture "bert", which the llamacpp engine does not serve \\(expected a decoder-only text model: llama, qwen2, qwen3`));

  const text = path.join(scratch, 'notes.gguf');
  writeFileSync(text, 'not a model at all, just some words');
  expect(refusal(text)).toBe(`${text} is not a GGUF file (no GGUF magic at its start)`);
  expect(readFileSync(text, 'utf8')).toContain('words');
});
