// The embedded backend: a DuckDB file (default OUTPUT_PATH/history.duckdb), nothing to set up.
// DuckDB lets one process at a time open a file for writing, or any number for reading. Readers
// (every `history` command but import, the suite's checks) open it read-only and take no lock of
// ours, so a notebook or dashboard holding it read-only does not stop them, and they never hold up
// a writer for longer than their own query. A writing session holds the file's lock
// (proper-lockfile, as results.json does) from open to close, so our own writers wait for each
// other; a foreign process holding the file (DuckDB's "Conflicting lock") is waited for a bounded
// time, then the session fails with `locked` set and the caller keeps its records aside
// (pending.ts). A file or folder we cannot write is said at once, before any lock is tried.
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBDoubleVector, DuckDBInstance, DuckDBIntegerVector, JSDuckDBValueConverter, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { FileLockError, withFileLock } from '../results/file-lock.ts';
import { HistoryStoreError } from './errors.ts';
import { sqlCall, type Column, type SqlConnection, type SqlValue } from './sql-connection.ts';

class DuckDbConnection implements SqlConnection {
  readonly dialect = 'duckdb' as const;
  constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  async queryColumns(sql: string, params: SqlValue[] = []): Promise<ArrayLike<unknown>[]> {
    return sqlCall(async () => {
      const result = await this.connection.run(sql, params);
      // A column of numbers lands in one Float64Array (outside the JS heap: a million values cost
      // the garbage collector nothing) until a NULL makes it an array; any other column, an array.
      const columns: (Float64Array | unknown[])[] = Array.from({ length: result.columnCount }, () => []);
      let row = 0;
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        for (let c = 0; c < columns.length; c++) {
          const vector = chunk.getColumnVector(c);
          const isNumber = vector instanceof DuckDBDoubleVector || vector instanceof DuckDBIntegerVector;
          if (row === 0 && isNumber) columns[c] = new Float64Array(result.rowCount);
          const column = columns[c];
          for (let i = 0; i < chunk.rowCount; i++) {
            const value = isNumber ? vector.getItem(i) : undefined;
            if (column instanceof Float64Array && value !== null && value !== undefined) column[row + i] = value as number;
            else {
              if (column instanceof Float64Array) columns[c] = Array.from(column.subarray(0, row + i));
              const list = columns[c] as unknown[];
              for (const v of chunk.convertColumnValues(c, JSDuckDBValueConverter).slice(i)) list.push(v);
              break;
            }
          }
        }
        row += chunk.rowCount;
      }
      return columns;
    });
  }

  async query<T extends Record<string, unknown>>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    const reader = await sqlCall(() => this.connection.runAndReadAll(sql, params));
    // Rows as arrays, then objects: several times faster than getRowObjectsJS on 50,000 rows.
    const names = reader.columnNames();
    return reader.getRowsJS().map((row) => Object.fromEntries(names.map((name, k) => [name, row[k]]))) as T[];
  }

  async exec(sql: string, params: SqlValue[] = []): Promise<void> {
    await sqlCall(() => this.connection.run(sql, params));
  }

  async insert(table: string, columns: readonly Column[], rows: SqlValue[][], options: { temporary?: boolean } = {}): Promise<void> {
    if (rows.length === 0) return;
    await sqlCall(async () => {
      // A temporary table lives in DuckDB's `temp` catalog, writable in a read-only session too.
      const appender = options.temporary ? await this.connection.createAppender(table, 'main', 'temp') : await this.connection.createAppender(table);
      try {
        for (const row of rows) {
          columns.forEach((column, k) => appendValue(appender, column, row[k]));
          appender.endRow();
        }
        appender.flushSync();
      } finally {
        appender.closeSync();
      }
    });
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.exec('BEGIN TRANSACTION');
    try {
      const result = await fn();
      await this.exec('COMMIT');
      return result;
    } catch (error) {
      await this.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

function appendValue(appender: DuckDBAppender, column: Column, value: SqlValue): void {
  if (value === null || value === undefined) return appender.appendNull();
  switch (column.type) {
    case 'text':
      return appender.appendVarchar(String(value));
    case 'double':
      return appender.appendDouble(Number(value));
    case 'bigint':
      return appender.appendBigInt(BigInt(Math.round(Number(value))));
    case 'boolean':
      return appender.appendBoolean(Boolean(value));
  }
}

/** DuckDB's own words for a file it cannot open, made into what to do. */
function openError(store: string, file: string, error: Error): HistoryStoreError {
  const message = error.message.replace(/\s+/g, ' ').trim();
  if (/not a valid DuckDB database|Could not read from file|database file .* not|invalid|corrupt/i.test(message)) {
    return new HistoryStoreError(store, `the file is not a DuckDB database this version can read (${message})`, `move ${file} aside (or set DISAGG_HISTORY to another file) and the next run starts a new history`);
  }
  if (/version|serialization|storage/i.test(message)) {
    return new HistoryStoreError(store, `the file was written by another DuckDB version (${message})`, 'use the disagg-bench version that wrote it, or set DISAGG_HISTORY to another file');
  }
  return new HistoryStoreError(store, `DuckDB cannot open it (${message})`, 'check the file and its folder, or set DISAGG_HISTORY to another file (off: no history)');
}

const isConflictingLock = (error: unknown) => /conflicting lock|could not set lock/i.test((error as Error)?.message ?? '');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the file, waiting up to `lockWaitMs` while another process holds it. */
async function openInstance(file: string, store: string, readOnly: boolean, lockWaitMs: number): Promise<DuckDBInstance> {
  const deadline = Date.now() + lockWaitMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    try {
      return await DuckDBInstance.create(file, readOnly ? { access_mode: 'READ_ONLY' } : {});
    } catch (error) {
      if (!isConflictingLock(error)) throw openError(store, file, error as Error);
      if (Date.now() >= deadline) {
        const held = (error as Error).message.match(/PID (\d+)/)?.[1];
        throw new HistoryStoreError(store, `another process${held ? ` (PID ${held})` : ''} holds the file for writing${readOnly ? '' : ' or reading'} and did not let go in ${Math.round(lockWaitMs / 1000)} s`, readOnly ? 'try again when it is done' : 'the records are kept aside and appended by the next run or `disagg-bench history import`', false, true);
      }
      await sleep(delay);
    }
  }
}

/** The file's own folder must be writable for DuckDB's write-ahead log and our lock; said once, at once. */
async function checkWritable(file: string, store: string): Promise<void> {
  const folder = path.dirname(file);
  await mkdir(folder, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new HistoryStoreError(store, `its folder cannot be created (${error.code ?? error.message})`, 'set DISAGG_HISTORY (or OUTPUT_PATH) to a writable place');
  });
  for (const [place, what] of [[folder, 'its folder'], [file, 'the file']] as const) {
    const error = await access(place, constants.W_OK).then(() => undefined, (e: NodeJS.ErrnoException) => e);
    if (error && error.code !== 'ENOENT') throw new HistoryStoreError(store, `${what} is not writable (${error.code})`, 'make it writable, or set DISAGG_HISTORY to another file (off: no history)');
  }
}

export interface DuckDbOpenOptions {
  /** Write (an append, an import, an upgrade): create the file if missing, take our lock. */
  create: boolean;
  /** How long to wait for another process holding the file (ms). */
  lockWaitMs?: number;
}

/** Opens the file (read-only, or for writing under the file's lock), runs fn on it, closes it. */
export async function withDuckDb<T>(file: string, store: string, fn: (db: SqlConnection) => Promise<T>, options: DuckDbOpenOptions): Promise<T> {
  const lockWaitMs = options.lockWaitMs ?? 30_000;
  if (!options.create) {
    await access(file).catch(() => {
      throw new HistoryStoreError(store, 'the file does not exist', 'run the suite once (it creates the file), import results with `disagg-bench history import`, or set DISAGG_HISTORY', true);
    });
    const instance = await openInstance(file, store, true, lockWaitMs);
    return session(instance, fn);
  }
  await checkWritable(file, store);
  return withFileLock(file, async () => session(await openInstance(file, store, false, lockWaitMs), fn)).catch((error: unknown) => {
    if (error instanceof FileLockError) throw new HistoryStoreError(store, error.message, 'check that its folder is writable, or set DISAGG_HISTORY to another file');
    throw error;
  });
}

async function session<T>(instance: DuckDBInstance, fn: (db: SqlConnection) => Promise<T>): Promise<T> {
  const db = new DuckDbConnection(instance, await instance.connect());
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
