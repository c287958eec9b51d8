// The rules of a llamacpp config: the shipped CPU config is valid; an accuracy task on dummy
// weights, an unknown shape, nsys profiling, a mode other than e2e, a worker key the engine does
// not know and a server of several processes are each refused in one sentence at their key.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { expect, it } from 'vitest';
import { servingRules } from '../../framework/types/serving/rules.ts';

const root = path.resolve(import.meta.dirname, '../..');
const shipped = parse(readFileSync(path.join(root, 'test_configs/disagg/perf/llamacpp-tiny_128-32_ctx1_gen1_cpu.yaml'), 'utf8'));
const patched = (edit: (c: typeof shipped) => void) => {
  const config = structuredClone(shipped);
  edit(config);
  return servingRules(config).map((v) => `${v.path.join('.')}: ${v.message}`);
};

it('accepts the shipped config and refuses, one sentence each, what the engine would not honour', () => {
  expect(servingRules(shipped)).toEqual([]);
  expect(patched((c) => {
    c.accuracy = { enable_accuracy_test: true, tasks: { gsm8k: { model: 'local-completions' } } };
  })).toContain('accuracy.enable_accuracy_test: accuracy tasks on dummy weights (dummy:tiny) measure nothing: point environment.model_path at a real GGUF');
  expect(patched((c) => {
    c.environment.model_path = 'dummy:huge';
  })).toEqual(['environment.model_path: no dummy model shape is named "huge"; expected dummy:tiny, dummy:qwen3-0.6b, dummy:llama-3.2-1b or a GGUF file']);
  expect(patched((c) => {
    c.profiling.nsys_on = true;
  })).toContain('profiling.nsys_on: nsys profiling is a TensorRT-LLM capture range; the llamacpp engine has none');
  expect(patched((c) => {
    c.benchmark.mode = 'gen_only';
  })).toContain("benchmark.mode: gen_only: the llamacpp engine runs mode e2e only (its generation servers always take a context server's state)");
  expect(patched((c) => {
    c.worker_config.gen.kv_cache_config = { dtype: 'fp8' };
    c.worker_config.ctx.tensor_parallel_size = 2;
  })).toEqual(expect.arrayContaining([
    expect.stringMatching(/^worker_config\.gen\.kv_cache_config: means nothing to the llamacpp engine; expected one of max_batch_size, /),
    'worker_config.ctx.tensor_parallel_size: 2: a llamacpp server is one process (1)',
  ]));
});
