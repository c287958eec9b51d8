// A throw-away PostgreSQL server from Debian's package (postgresql-15: /usr/lib/postgresql/*/bin),
// for the history's tests and benchmarks: initdb into a temporary folder, a free port on
// 127.0.0.1, its unix socket in that folder, trust authentication for one user. PostgreSQL
// refuses to run as root, so as root (CI) the server runs as the package's `postgres` user. stop()
// ends it and removes the folder. Also a command: `npx tsx scripts/postgres-local.ts` starts one,
// prints its DISAGG_HISTORY URL and stops it on Ctrl-C.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { freePort } from '../runners/common/free-port.ts';

export interface LocalPostgres {
  /** postgres://disagg@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  dir: string;
  /** A URL of a fresh, empty database on this server. */
  createDatabase(name: string): string;
  stop(): void;
}

/** The binaries of the newest PostgreSQL Debian installed. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server under ${root}: install Debian's postgresql package (apt-get install postgresql)`);
  return path.join(root, versions[0], 'bin');
}

export async function startPostgres(options: { fsync?: boolean } = {}): Promise<LocalPostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(path.join(tmpdir(), 'disagg-pg-'));
  const asRoot = userInfo().uid === 0;
  // Run the server's programs as `postgres` when we are root (PostgreSQL refuses root).
  const run = (program: string, args: string[]) => {
    const command = asRoot ? ['runuser', '-u', 'postgres', '--', path.join(bin, program), ...args] : [path.join(bin, program), ...args];
    return execFileSync(command[0], command.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
  };
  if (asRoot) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  const port = await freePort();
  try {
    run('initdb', ['-D', data, '-U', 'disagg', '--auth=trust', '-E', 'UTF8', '--no-sync', '--locale=C']);
    const settings = [`-p ${port}`, `-k ${dir}`, `-c listen_addresses=127.0.0.1`, ...(options.fsync === false ? ['-c fsync=off', '-c synchronous_commit=off'] : [])];
    run('pg_ctl', ['-D', data, '-l', log, '-o', settings.join(' '), '-w', '-t', '60', 'start']);
  } catch (error) {
    const detail = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : String((error as { stderr?: string }).stderr ?? (error as Error).message);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a local PostgreSQL (${bin}): ${detail.trim()}`);
  }
  const url = (db: string) => `postgres://disagg@127.0.0.1:${port}/${db}`;
  let stopped = false;
  return {
    url: url('postgres'),
    port,
    dir,
    createDatabase(name: string) {
      run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'disagg', name]);
      return url(name);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error("PostgreSQL refuses to run as root and there is no 'postgres' user: install Debian's postgresql package");
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startPostgres();
  console.log(`DISAGG_HISTORY=${server.url}   (Ctrl-C stops the server and removes ${server.dir})`);
  const stop = () => {
    server.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  setInterval(() => undefined, 1 << 30);
}
