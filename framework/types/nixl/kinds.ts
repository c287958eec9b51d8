// The registered kinds of the nixl test type. A new kind: one module + one line here.
import type { NixlKind } from './kind.ts';
import { ctPerftestKind } from './kinds/ct-perftest.ts';
import { sequentialCtPerftestKind } from './kinds/sequential-ct-perftest.ts';
import { matgenKind } from './kinds/matgen.ts';
import { sweepKind } from './kinds/sweep.ts';
import { epKind } from './kinds/ep.ts';
import { kvpipeKind } from './kinds/kvpipe.ts';
import { cacheEngineKind } from './kinds/cache-engine.ts';
import { kvbenchKind, lmcacheKind, nixlEpPerfKind, nixlbenchKind } from './kinds/tool.ts';

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
