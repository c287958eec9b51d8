// Where a config's relative `matrix_file` is: this project reads it relative to the config's
// folder, kvbench (NIXL benchmark/kvbench main.py: `load_matrix(Path(tp_config["matrix_file"]))`)
// relative to the working directory. Both are accepted and the run says which file it read: a
// config written for kvbench runs unchanged, and one written for this project too. When both
// places hold a file of that name and the two differ, neither is picked: the run is refused naming
// both (the same file, or two identical copies, is read from the config's folder).
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { XferError } from '../errors.ts';

export type MatrixBase = 'absolute' | 'config folder' | 'working directory';

export interface ResolvedMatrixFile {
  /** Absolute path of the file to read. */
  file: string;
  base: MatrixBase;
  /** An identical file of that name in the working directory (not read: the same bytes). */
  identical?: string;
}

/** A relative matrix_file that names no file, or two different ones. */
export class MatrixFileNotFound extends XferError {
  override name = 'MatrixFileNotFound';
}

export function resolveMatrixFile(configDir: string, value: string, cwd: string = process.cwd()): ResolvedMatrixFile {
  if (path.isAbsolute(value)) return { file: value, base: 'absolute' };
  const inConfig = path.resolve(configDir, value);
  const inCwd = path.resolve(cwd, value);
  const [configHas, cwdHas] = [existsSync(inConfig), inCwd !== inConfig && existsSync(inCwd)];
  if (configHas && cwdHas) {
    if (!sameBytes(inConfig, inCwd)) {
      throw new MatrixFileNotFound(
        `matrix file ${value} is ambiguous: ${inConfig} (relative to the config's folder) and ${inCwd} (relative to the working directory, where kvbench looks) ` +
          'are different files; name one with an absolute path, or remove the other',
      );
    }
    return { file: inConfig, base: 'config folder', identical: inCwd };
  }
  if (configHas) return { file: inConfig, base: 'config folder' };
  if (cwdHas) return { file: inCwd, base: 'working directory' };
  if (inCwd === inConfig) throw new MatrixFileNotFound(`matrix file ${value} not found: ${inConfig} does not exist`);
  throw new MatrixFileNotFound(
    `matrix file ${value} not found: neither ${inConfig} (relative to the config's folder) nor ${inCwd} (relative to the working directory, where kvbench looks) exists`,
  );
}

/** The same file (a link), or two regular files with the same bytes, compared 1 MiB at a time. */
function sameBytes(a: string, b: string): boolean {
  const [sa, sb] = [statSync(a), statSync(b)];
  if (sa.dev === sb.dev && sa.ino === sb.ino) return true;
  if (!sa.isFile() || !sb.isFile() || sa.size !== sb.size) return false;
  const [fa, fb] = [openSync(a, 'r'), openSync(b, 'r')];
  try {
    const [ba, bb] = [Buffer.alloc(1 << 20), Buffer.alloc(1 << 20)];
    for (let at = 0; at < sa.size; ) {
      const n = readSync(fa, ba, 0, ba.length, at);
      if (n === 0 || readSync(fb, bb, 0, n, at) !== n || !ba.subarray(0, n).equals(bb.subarray(0, n))) return false;
      at += n;
    }
    return true;
  } finally {
    closeSync(fa);
    closeSync(fb);
  }
}

/** The line a run prints for a relative matrix_file: which file it read, and from which base. */
export function matrixFileNote(value: string, r: ResolvedMatrixFile): string | undefined {
  if (r.base === 'absolute') return undefined;
  const why = r.base === 'config folder' ? "relative to the config's folder" : "relative to the working directory (as kvbench resolves it; the config's folder has no such file)";
  return `matrix_file ${value}: read ${r.file}, ${why}${r.identical ? `; ${r.identical} in the working directory has the same bytes` : ''}`;
}
