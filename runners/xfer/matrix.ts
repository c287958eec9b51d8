// Transfer matrices: N x N, row i = sender, column j = receiver, cell = bytes i sends to j.
// Cells are read as kvbench reads them (NIXL benchmark/kvbench main.py): each a size token
// (runners/common/size.ts: Python float syntax, units K, M, G = 1024^n or B), truncated to whole
// bytes as int() does: `3.53G` is 3790308638 bytes; the reader says once per file how many bytes
// that dropped. Beyond kvbench: `#` comments and blank lines are accepted.
import { sizeValue } from '../common/size.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../common/read-file.ts';
import { XferError } from './errors.ts';
import type { ErrorCategory } from '../common/errors.ts';

export type TransferMatrix = number[][];

export class MatrixError extends XferError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(
    message: string,
    override readonly file: string,
    readonly line?: number,
    readonly col?: number,
  ) {
    super(line === undefined ? `${file}: ${message}` : `${file}:${line}:${col} ${message}`);
    this.name = 'MatrixError';
  }
}

/** A matrix cell as kvbench reads it: truncated to whole bytes (int()); `dropped` is the fraction cut off. */
export function parseMatrixCell(token: string): { bytes: number; dropped: number } {
  const value = sizeValue(token);
  const bytes = Math.trunc(value);
  return { bytes, dropped: value - bytes };
}

/** Cells that were not whole bytes: how many, the bytes cut off in all, the first of them. */
export interface MatrixTruncation {
  cells: number;
  droppedBytes: number;
  first: { token: string; row: number; col: number; value: number };
}

export interface ParsedMatrix {
  matrix: TransferMatrix;
  truncation?: MatrixTruncation;
}

/** The lines of `text` holding cells (comments cut, blank lines skipped), one at a time: no copy of the whole text is split. */
function* cellLines(text: string): Generator<{ content: string; line: number }> {
  let line = 0;
  for (let at = 0; at <= text.length; ) {
    let end = text.indexOf('\n', at);
    if (end < 0) end = text.length;
    line++;
    const raw = text.slice(at, end);
    at = end + 1;
    const hash = raw.indexOf('#');
    const content = hash < 0 ? raw : raw.slice(0, hash);
    if (content.trim()) yield { content, line };
    if (end === text.length) break;
  }
}

const SPACE = 32;
const TAB = 9;
const CR = 13;

/** The cells of one line: each token with where it starts (1-based column). */
function* tokens(content: string): Generator<{ token: string; col: number }> {
  for (const match of content.matchAll(/\S+/g)) yield { token: match[0], col: match.index! + 1 };
}

/** Whether a line is plain ASCII (its blanks are spaces, tabs, CR): the fast path reads it char by char. */
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const isBlank = (c: number) => c === SPACE || c === TAB || c === CR || c === 11 || c === 12;

const countTokens = (content: string): number => {
  if (!ASCII_ONLY.test(content)) {
    let n = 0;
    for (const _ of tokens(content)) n++;
    return n;
  }
  let n = 0;
  let inToken = false;
  for (let i = 0; i < content.length; i++) {
    const blank = isBlank(content.charCodeAt(i));
    if (!blank && !inToken) n++;
    inToken = !blank;
  }
  return n;
};

/**
 * The cells of an ASCII line, each a token with its column: a run of at most 15 digits is read
 * here without making a string of it (what a matrix is made of, millions of times in a large file);
 * anything else goes through parseMatrixCell.
 */
function forEachCell(content: string, visit: (token: () => string, col: number, digits: number | undefined) => void): void {
  if (!ASCII_ONLY.test(content)) {
    for (const { token, col } of tokens(content)) visit(() => token, col, undefined);
    return;
  }
  for (let i = 0; i < content.length; ) {
    while (i < content.length && isBlank(content.charCodeAt(i))) i++;
    if (i >= content.length) break;
    const start = i;
    let value = 0;
    let digitsOnly = true;
    for (; i < content.length && !isBlank(content.charCodeAt(i)); i++) {
      const c = content.charCodeAt(i) - 48;
      if (c < 0 || c > 9) digitsOnly = false;
      else if (digitsOnly) value = value * 10 + c;
    }
    const end = i;
    visit(() => content.slice(start, end), start + 1, digitsOnly && end - start <= 15 ? value : undefined);
  }
}

/** Rows of the matrix counted without reading a cell (for a message about its shape). */
function countRows(text: string): number {
  let n = 0;
  for (const _ of cellLines(text)) n++;
  return n;
}

/**
 * Reads a matrix row by row and stops at the first row that cannot belong to a square matrix of
 * the run's ranks (or of its first row's length): a file of millions of one-cell lines is refused
 * after two rows, not held whole. `keep` false checks without holding a cell (validation).
 */
function scanMatrix(text: string, file: string, expectedRanks: number | undefined, keep: boolean): { rows: number; matrix: TransferMatrix; truncation?: MatrixTruncation } {
  const matrix: TransferMatrix = [];
  let truncation: MatrixTruncation | undefined;
  let size: number | undefined;
  let rows = 0;
  // The shape's problem in the words of the whole file: its row count is read only then.
  const shapeError = (row: number, cells: number, line: number): MatrixError => {
    const total = countRows(text);
    if (cells !== total) return new MatrixError(`row ${row} has ${cells} cells; a ${total}-row matrix must be square`, file, line, 1);
    if (expectedRanks !== undefined && total !== expectedRanks) return new MatrixError(`the matrix is ${total} x ${total} but the run has ${expectedRanks} ranks`, file);
    const first = cellLines(text).next().value!;
    return new MatrixError(`row 0 has ${size} cells; a ${total}-row matrix must be square`, file, first.line, 1);
  };
  for (const { content, line } of cellLines(text)) {
    const cells = countTokens(content);
    size ??= expectedRanks ?? cells;
    if (rows >= size) throw shapeError(rows, cells, line);
    const row: number[] = [];
    let col = 0;
    // A bad cell is named before the row's shape (it is what is wrong with a file of garbage); no
    // cell past the matrix's size is read.
    forEachCell(content, (token, at, digits) => {
      if (col >= size!) throw shapeError(rows, cells, line);
      let cell: { bytes: number; dropped: number };
      if (digits !== undefined) cell = { bytes: digits, dropped: 0 };
      else {
        try {
          cell = parseMatrixCell(token());
        } catch (err) {
          throw new MatrixError(`${(err as Error).message} (row ${rows}, column ${col})`, file, line, at);
        }
      }
      if (cell.dropped > 0) {
        truncation ??= { cells: 0, droppedBytes: 0, first: { token: token(), row: rows, col, value: cell.bytes + cell.dropped } };
        truncation.cells++;
        truncation.droppedBytes += cell.dropped;
      }
      if (keep) row.push(cell.bytes);
      col++;
    });
    if (cells !== size) throw shapeError(rows, cells, line);
    if (keep) matrix.push(row);
    rows++;
  }
  if (rows === 0) throw new MatrixError('the matrix is empty', file);
  if (rows !== size) {
    // Fewer rows than cells in a row (or than the run's ranks).
    const first = cellLines(text).next().value!;
    throw shapeError(0, countTokens(first.content), first.line);
  }
  return { rows, matrix, truncation };
}

export function parseMatrixText(text: string, file: string, expectedRanks?: number): ParsedMatrix {
  const { matrix, truncation } = scanMatrix(text, file, expectedRanks, true);
  return { matrix, truncation };
}

/** Checks a matrix's text as parseMatrixText reads it, holding none of its cells; returns its size. */
export function checkMatrixText(text: string, file: string, expectedRanks?: number): number {
  return scanMatrix(text, file, expectedRanks, false).rows;
}

export function parseMatrix(text: string, file: string, expectedRanks?: number): TransferMatrix {
  return parseMatrixText(text, file, expectedRanks).matrix;
}

export function readMatrixFile(file: string, expectedRanks?: number): ParsedMatrix {
  let text: string;
  try {
    text = readTextFileSync(file, READ_LIMITS.matrix);
  } catch (err) {
    if (err instanceof FileReadError) throw new MatrixError(`the matrix file ${err.reason}`, file);
    throw err;
  }
  return parseMatrixText(text, file, expectedRanks);
}

export function readMatrix(file: string, expectedRanks?: number): TransferMatrix {
  return readMatrixFile(file, expectedRanks).matrix;
}

/** The one line a run prints for a file whose cells were truncated. */
export function truncationNote(file: string, t: MatrixTruncation): string {
  const { token, row, col, value } = t.first;
  return (
    `${file}: ${t.cells} cell(s) are not whole bytes (the first: '${token}' at row ${row}, column ${col} = ${value} bytes); ` +
    `truncated to whole bytes as kvbench does (int()), ${Number(t.droppedBytes.toFixed(3))} byte(s) dropped in all`
  );
}

/** Exact bytes, one row per line: what the matrix generator writes (no lossy units). */
export function formatMatrix(matrix: TransferMatrix): string {
  return matrix.map((row) => row.join(' ')).join('\n') + '\n';
}

export const rowSum = (m: TransferMatrix, i: number): number => m[i].reduce((a, b) => a + b, 0);
export const colSum = (m: TransferMatrix, j: number): number => m.reduce((a, row) => a + row[j], 0);
export const totalBytes = (m: TransferMatrix): number => m.reduce((a, row) => a + row.reduce((x, y) => x + y, 0), 0);
/** Ranks that send anything in this pattern. */
export const senders = (m: TransferMatrix): number[] => m.flatMap((row, i) => (row.some((c) => c > 0) ? [i] : []));
