// Where a config's relative `matrix_file` is: this project reads it relative to the config's
// folder, kvbench (NIXL benchmark/kvbench) relative to the working directory. Both are accepted,
// the config's folder first, and the run says which file it read: a config written for kvbench
// runs unchanged, and one written for this project too.
import { existsSync } from 'node:fs';
import path from 'node:path';

export type MatrixBase = 'absolute' | 'config folder' | 'working directory';

export interface ResolvedMatrixFile {
  /** Absolute path of the file to read. */
  file: string;
  base: MatrixBase;
  /** A different file of that name in the working directory, not read (the config's folder won). */
  shadowed?: string;
}

export class MatrixFileNotFound extends Error {
  override name = 'MatrixFileNotFound';
}

export function resolveMatrixFile(configDir: string, value: string, cwd: string = process.cwd()): ResolvedMatrixFile {
  if (path.isAbsolute(value)) return { file: value, base: 'absolute' };
  const inConfig = path.resolve(configDir, value);
  const inCwd = path.resolve(cwd, value);
  if (existsSync(inConfig)) return { file: inConfig, base: 'config folder', ...(inCwd !== inConfig && existsSync(inCwd) ? { shadowed: inCwd } : {}) };
  if (existsSync(inCwd)) return { file: inCwd, base: 'working directory' };
  if (inCwd === inConfig) throw new MatrixFileNotFound(`matrix file ${value} not found: ${inConfig} does not exist`);
  throw new MatrixFileNotFound(
    `matrix file ${value} not found: neither ${inConfig} (relative to the config's folder) nor ${inCwd} (relative to the working directory, where kvbench looks) exists`,
  );
}

/** The line a run prints for a relative matrix_file: which file it read, and from which base. */
export function matrixFileNote(value: string, r: ResolvedMatrixFile): string | undefined {
  if (r.base === 'absolute') return undefined;
  const why = r.base === 'config folder' ? "relative to the config's folder" : "relative to the working directory (as kvbench resolves it; the config's folder has no such file)";
  return `matrix_file ${value}: read ${r.file}, ${why}${r.shadowed ? `; ${r.shadowed} in the working directory was not read` : ''}`;
}
