// The shared backend: a PostgreSQL database that many runs (a team, CI) write to at once, chosen
// with DISAGG_HISTORY=postgres://user@host:port/database. One connection per session; appends are
// transactions, so two runs writing at once both land whole. The connection gives up after
// DISAGG_HISTORY_CONNECT_TIMEOUT_SEC (default 10) instead of holding a run.
import pg from 'pg';
import { HistoryStoreError } from './errors.ts';
import { sqlCall, type Column, type SqlConnection, type SqlValue } from './sql-connection.ts';

const PG_ARRAY_TYPES: Record<Column['type'], string> = { text: 'text[]', double: 'float8[]', bigint: 'int8[]', boolean: 'bool[]' };

class PostgresConnection implements SqlConnection {
  readonly dialect = 'postgres' as const;
  constructor(private readonly client: pg.Client) {}

  async query<T extends Record<string, unknown>>(sql: string, params: SqlValue[] = []): Promise<T[]> {
    return (await sqlCall(() => this.client.query(sql, params))).rows as T[];
  }

  async queryColumns(sql: string, params: SqlValue[] = []): Promise<ArrayLike<unknown>[]> {
    const result = await sqlCall(() => this.client.query({ text: sql, values: params, rowMode: 'array' }));
    const rows = result.rows as unknown[][];
    return result.fields.map((_, k) => rows.map((row) => row[k]));
  }

  async exec(sql: string, params: SqlValue[] = []): Promise<void> {
    await sqlCall(() => this.client.query(sql, params));
  }

  /** One statement per insert: each column goes as one array parameter, unnest() zips them into rows. */
  async insert(table: string, columns: readonly Column[], rows: SqlValue[][]): Promise<void> {
    if (rows.length === 0) return;
    const arrays = columns.map((_, k) => rows.map((row) => row[k] ?? null));
    const unnest = columns.map((c, k) => `$${k + 1}::${PG_ARRAY_TYPES[c.type]}`).join(', ');
    await sqlCall(() => this.client.query(`INSERT INTO ${table} (${columns.map((c) => c.name).join(', ')}) SELECT * FROM unnest(${unnest})`, arrays));
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await sqlCall(() => this.client.query('BEGIN'));
    try {
      const result = await fn();
      await sqlCall(() => this.client.query('COMMIT'));
      return result;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

/** What went wrong reaching the server, in one clause. */
function connectReason(error: Error & { code?: string }): string {
  const message = error.message.replace(/\s+/g, ' ').trim();
  if (error.code === 'ECONNREFUSED') return `no server answers there (${message})`;
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return `its host is unknown (${message})`;
  if (/timeout/i.test(message)) return `the server did not answer in time (${message})`;
  return `it cannot be reached (${message})`;
}

function connectTimeoutMs(): number {
  const seconds = Number(process.env.DISAGG_HISTORY_CONNECT_TIMEOUT_SEC ?? 10);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 10_000;
}

export async function withPostgres<T>(url: string, store: string, fn: (db: SqlConnection) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs(), application_name: 'disagg-bench' });
  // An idle connection dropped by the server must not crash the process: the next query says so.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new HistoryStoreError(store, connectReason(error as Error & { code?: string }), 'start the server or correct DISAGG_HISTORY (DISAGG_HISTORY=off runs without history)');
  }
  const db = new PostgresConnection(client);
  try {
    return await fn(db);
  } finally {
    await db.close().catch(() => undefined);
  }
}
