// The embedded backend: a DuckDB file (default OUTPUT_PATH/history.duckdb), nothing to set up.
// DuckDB lets one process at a time open a file for writing, so every session holds the file's
// lock (proper-lockfile, as results.json does) from open to close: runs writing at once wait for
// each other instead of failing, and each append is one transaction.
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { FileLockError, withFileLock } from '../results/file-lock.ts';
import { HistoryStoreError } from './errors.ts';
import { sqlCall, type Column, type SqlConnection, type SqlValue } from './sql-connection.ts';

class DuckDbConnection implements SqlConnection {
  readonly dialect = 'duckdb' as const;
  constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  async query<T extends Record<string, unknown>>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    const reader = await sqlCall(() => this.connection.runAndReadAll(sql, params));
    // Rows as arrays, then objects: several times faster than getRowObjectsJS on 50,000 rows.
    const names = reader.columnNames();
    return reader.getRowsJS().map((row) => Object.fromEntries(names.map((name, k) => [name, row[k]]))) as T[];
  }

  async exec(sql: string, params: SqlValue[] = []): Promise<void> {
    await sqlCall(() => this.connection.run(sql, params));
  }

  async insert(table: string, columns: readonly Column[], rows: SqlValue[][]): Promise<void> {
    if (rows.length === 0) return;
    await sqlCall(async () => {
      const appender = await this.connection.createAppender(table);
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

/** Opens the file (creating it and its folder), runs fn on it under the file's lock, closes it. */
export async function withDuckDb<T>(file: string, store: string, fn: (db: SqlConnection) => Promise<T>, options: { create: boolean }): Promise<T> {
  if (!options.create) {
    await access(file).catch(() => {
      throw new HistoryStoreError(store, 'the file does not exist', 'run the suite once (it creates the file), import results with `disagg-bench history import`, or set DISAGG_HISTORY', true);
    });
  }
  await mkdir(path.dirname(file), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw new HistoryStoreError(store, `its folder cannot be created (${error.code ?? error.message})`, 'set DISAGG_HISTORY (or OUTPUT_PATH) to a writable place');
  });
  return withFileLock(file, async () => {
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(file);
    } catch (error) {
      throw openError(store, file, error as Error);
    }
    const db = new DuckDbConnection(instance, await instance.connect());
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  }).catch((error: unknown) => {
    if (error instanceof FileLockError) throw new HistoryStoreError(store, error.message, 'check that its folder is writable, or set DISAGG_HISTORY to another file');
    throw error;
  });
}
