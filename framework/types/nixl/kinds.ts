// The registered kinds of the nixl test type. A new kind: one module + one line here.
import type { NixlKind } from './kind.ts';
import { nixlConfig } from './common.ts';
import { ctPerftestKind } from './kinds/ct-perftest.ts';
import { sequentialCtPerftestKind } from './kinds/sequential-ct-perftest.ts';
import { matgenKind } from './kinds/matgen.ts';
import { sweepKind } from './kinds/sweep.ts';
import { epKind } from './kinds/ep.ts';
import { kvpipeKind } from './kinds/kvpipe.ts';
import { cacheEngineKind } from './kinds/cache-engine.ts';
import { kvbenchKind, lmcacheKind, nixlEpPerfKind, nixlbenchKind } from './kinds/tool.ts';
import { InputError } from '../../../runners/common/errors.ts';

export const nixlKinds: NixlKind[] = [
  ctPerftestKind,
  sequentialCtPerftestKind,
  matgenKind,
  sweepKind,
  epKind,
  kvpipeKind,
  cacheEngineKind,
  nixlbenchKind,
  kvbenchKind,
  nixlEpPerfKind,
  lmcacheKind,
];

export function nixlKind(name: string): NixlKind | undefined {
  return nixlKinds.find((k) => k.name === name);
}

/** The kind a (schema-valid) config names. */
export function kindOf(config: Record<string, unknown>): NixlKind {
  const name = nixlConfig(config).benchmark.kind;
  const kind = nixlKind(name);
  if (!kind) throw new InputError(`benchmark.kind '${name}' is not a registered nixl kind (known: ${nixlKinds.map((k) => k.name).join(', ')})`);
  return kind;
}
