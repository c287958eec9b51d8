// The serving engines a config can name (`launch.engine`), one line each; the first is the
// default. A new engine is its table (engine.ts says what it holds) and its line here
// (docs/extending.md).
import type { ServingEngine } from './engine.ts';
import { trtllmEngine } from './trtllm.ts';
import { llamacppEngine } from './llamacpp.ts';
import type { ServingConfig } from '../serving-config.ts';
import { InputError } from '../../../../runners/common/errors.ts';

const engines: ServingEngine[] = [trtllmEngine, llamacppEngine];

/** The names `launch.engine` accepts, the default first. */
export function engineNames(): string[] {
  return engines.map((e) => e.name);
}

/** The engine a config runs: launch.engine, else the first listed. */
export function engineOf(config: ServingConfig): ServingEngine {
  const name = config.launch?.engine;
  if (name === undefined) return engines[0];
  const found = engines.find((e) => e.name === name);
  if (found) return found;
  throw new InputError(`launch.engine: no serving engine is named ${JSON.stringify(name)}`, { place: 'launch.engine', expected: engineNames().join(', ') });
}
