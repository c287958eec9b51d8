// What tests that need the local Grid Engine cell import: describeGridEngine, which skips the suite
// (saying why) when the cluster project's global setup left the cell off (DISAGG_NO_GRIDENGINE=1),
// and describeGridEngineHosts, which also skips it on a cell of one host (no network namespaces).
import { describe, inject } from 'vitest';
import type {} from './global-setup.ts'; // the ProvidedContext declaration of gridEngine

/** The cell's environment for its client commands (qsub, qstat, qdel). */
export function gridEngineEnv(): { SGE_ROOT: string; SGE_CELL: string; PATH: string } {
  return { SGE_ROOT: process.env.SGE_ROOT ?? '/var/lib/gridengine', SGE_CELL: process.env.SGE_CELL ?? 'default', PATH: process.env.PATH ?? '/usr/bin:/bin' };
}

export function describeGridEngine(name: string, body: () => void): void {
  if (inject('gridEngine')) describe(name, body);
  else describe.skip(`${name} (skipped: DISAGG_NO_GRIDENGINE=1: the local Grid Engine cell is off)`, body);
}

/** As describeGridEngine, for tests that need two execution hosts (skipped, saying why, on a cell of one). */
export function describeGridEngineHosts(name: string, body: () => void): void {
  if (!inject('gridEngine')) describeGridEngine(name, body);
  else if (inject('gridEngineHosts').length >= 2) describe(name, body);
  else describe.skip(`${name} (skipped: ${inject('gridEngineOneHostWhy')})`, body);
}
