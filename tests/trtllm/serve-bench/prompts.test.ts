import { describe, expect, it } from 'vitest';
import { generatePrompts } from '../../../runners/trtllm/serve-bench/prompts.ts';

describe('random prompts', () => {
  it('makes prompts of exactly inputLen words, the same for the same seed', () => {
    const plan = { count: 5, inputLen: 300, outputLen: 64, rangeRatio: 0, seed: 42 };
    const a = generatePrompts(plan);
    expect(a).toHaveLength(5);
    for (const p of a) {
      expect(p.text.split(' ')).toHaveLength(300);
      expect(p).toMatchObject({ words: 300, outputLen: 64 });
    }
    expect(generatePrompts(plan)).toEqual(a);
    expect(generatePrompts({ ...plan, seed: 43 })[0].text).not.toBe(a[0].text);
    expect(new Set(a.map((p) => p.text)).size).toBe(5);
  });

  it('draws lengths within [len * (1 - r), len * (1 + r)]', () => {
    const prompts = generatePrompts({ count: 200, inputLen: 100, outputLen: 10, rangeRatio: 0.5, seed: 1 });
    const inputs = prompts.map((p) => p.words);
    const outputs = prompts.map((p) => p.outputLen);
    expect(inputs.every((x) => x >= 50 && x <= 150)).toBe(true);
    expect(new Set(inputs).size).toBeGreaterThan(10);
    expect(outputs.every((x) => x >= 5 && x <= 15)).toBe(true);
    for (const p of prompts) expect(p.text.split(' ')).toHaveLength(p.words);
  });
});
