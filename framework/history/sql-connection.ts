// The small interface both history backends implement: parameterised queries ($1, $2... in both
// dialects), bulk inserts and transactions. Everything above it (store.ts) is one SQL text for
// both; only opening, bulk inserts and a few DDL lines differ per backend.
import { DisaggBenchError } from '../../runners/common/errors.ts';

export type SqlValue = string | number | boolean | null;
export type ColumnType = 'text' | 'double' | 'bigint' | 'boolean';
export interface Column {
  name: string;
  type: ColumnType;
}

export interface SqlConnection {
  readonly dialect: 'duckdb' | 'postgres';
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: SqlValue[]): Promise<T[]>;
  /** Columns as arrays, in the query's order: a million numbers without an array per row. */
  queryColumns(sql: string, params?: SqlValue[]): Promise<ArrayLike<unknown>[]>;
  exec(sql: string, params?: SqlValue[]): Promise<void>;
  /** Inserts rows (one array per row, values in column order); `temporary`: a session's temporary table. */
  insert(table: string, columns: readonly Column[], rows: SqlValue[][], options?: { temporary?: boolean }): Promise<void>;
  /** Runs fn in one transaction: all of it is committed, or none of it. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A backend's failure, kept apart from the errors of the code that called it. */
export class SqlError extends DisaggBenchError {
  override name = 'SqlError';
  readonly code?: string;
  constructor(error: unknown) {
    super(((error as Error)?.message ?? String(error)).replace(/\s+/g, ' ').trim(), {}, { cause: error });
    this.code = (error as { code?: string })?.code;
  }
}

/** Runs a backend call, turning its failure into an SqlError. */
export async function sqlCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof SqlError ? error : new SqlError(error);
  }
}
