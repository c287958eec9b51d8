// What a config for the embedded llama.cpp engine (`launch.engine: llamacpp`) must be, beyond the
// serving schema: a benchmark mode it runs, a model it can load (a GGUF, or a named dummy shape),
// worker options it knows, one process per server, and no request its servers would ignore
// (nsys profiling, accuracy tasks on random weights).
import type { KeyPath, RuleViolation } from '../../contract/test-type.ts';
import { modelShapes, shapeName } from '../../../runners/llamacpp/shapes.ts';
import { WORKER_KEYS } from '../../../runners/llamacpp/worker-options.ts';
import type { ServingConfig } from './serving-config.ts';

const violation = (path: KeyPath, message: string): RuleViolation => ({ path, message });

export function llamacppRules(config: ServingConfig): RuleViolation[] {
  if (config.launch?.engine !== 'llamacpp') return [];
  const out: RuleViolation[] = [];
  if (config.benchmark.mode !== undefined && config.benchmark.mode !== 'e2e') {
    out.push(violation(['benchmark', 'mode'], `${config.benchmark.mode}: the llamacpp engine runs mode e2e only (its generation servers always take a context server's state)`));
  }
  const shape = shapeName(config.environment.model_path);
  if (shape !== undefined && !modelShapes[shape]) {
    out.push(violation(['environment', 'model_path'], `no dummy model shape is named "${shape}"; expected dummy:${Object.keys(modelShapes).join(', dummy:')} or a GGUF file`));
  }
  if (shape !== undefined && config.accuracy?.enable_accuracy_test) {
    out.push(violation(['accuracy', 'enable_accuracy_test'], `accuracy tasks on dummy weights (${config.environment.model_path}) measure nothing: point environment.model_path at a real GGUF`));
  }
  if (config.profiling?.nsys_on) out.push(violation(['profiling', 'nsys_on'], 'nsys profiling is a TensorRT-LLM capture range; the llamacpp engine has none'));
  for (const role of ['ctx', 'gen'] as const) {
    for (const key of Object.keys(config.worker_config[role] ?? {})) {
      if (!WORKER_KEYS.has(key)) out.push(violation(['worker_config', role, key], `means nothing to the llamacpp engine; expected one of ${[...WORKER_KEYS].join(', ')}`));
    }
    for (const key of ['tensor_parallel_size', 'pipeline_parallel_size', 'context_parallel_size'] as const) {
      const value = config.worker_config[role]?.[key];
      if (value !== undefined && value !== 1) out.push(violation(['worker_config', role, key], `${value}: a llamacpp server is one process (1)`));
    }
  }
  return out;
}
