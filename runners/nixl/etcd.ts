// A private etcd for one job: its own data folder and its own client and peer ports, started
// before the ranks and stopped (data removed, log kept) after them, whatever happened. The
// tools keep their state under a per-job prefix (nixlbench: xferbench/<benchmark_group>/),
// wiped before the run: an earlier run's keys (rank counts, barriers) would break the next one.
// Binaries: `etcd` and `etcdctl` on PATH (Debian's etcd-server / etcd-client), or ETCD_BIN /
// ETCDCTL_BIN.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { READ_LIMITS, readTailSync, readTextFileSync } from '../common/read-file.ts';
import { DisaggBenchError, type ErrorPlace } from '../common/errors.ts';
import { freePort } from '../common/free-port.ts';
import type { ErrorCategory } from '../common/errors.ts';

export class EtcdError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'environment';
  }
  override name = 'EtcdError';
  constructor(message: string, where: ErrorPlace = {}) {
    super(message, where);
  }
}

/** What `etcd-start` leaves in its folder for the ranks and for `etcd-stop`. */
export const ETCD_FILES = { env: 'etcd.env', pid: 'etcd.pid', log: 'etcd.log', data: 'data' } as const;

const etcdBin = () => process.env.ETCD_BIN || 'etcd';
const etcdctlBin = () => process.env.ETCDCTL_BIN || 'etcdctl';

export interface StartOptions {
  /** The job's etcd folder (data, log, pid and env files). */
  dir: string;
  /** Address to listen on and advertise: 127.0.0.1 for a one-node job, an address other nodes reach otherwise. */
  host?: string;
  /** Seconds to wait for the server to answer (default 30). */
  readyTimeoutS?: number;
}

export interface RunningEtcd {
  endpoint: string;
  pid: number;
  dir: string;
}

/** An address of this host that other nodes can reach (first non-internal IPv4), else loopback. */
export function reachableHost(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Starts etcd detached (it outlives this process: the ranks use it), waits until it answers. */
export async function startEtcd(options: StartOptions): Promise<RunningEtcd> {
  const host = options.host ?? '127.0.0.1';
  const dir = path.resolve(options.dir);
  fs.mkdirSync(dir, { recursive: true });
  if (fs.existsSync(path.join(dir, ETCD_FILES.pid))) {
    throw new EtcdError(`${dir} already holds an etcd (${ETCD_FILES.pid}); stop it first (disagg-bench nixl-tool etcd-stop --dir ${dir})`, { file: dir });
  }
  let lastProblem = '';
  // A port seen free may be taken before etcd binds it: try again with new ports.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const [clientPort, peerPort] = [await freePort(host), await freePort(host)];
    const endpoint = `http://${host}:${clientPort}`;
    const peer = `http://${host}:${peerPort}`;
    const name = `disagg-${path.basename(path.dirname(dir))}-${clientPort}`.replace(/[^A-Za-z0-9_.-]/g, '_');
    const log = fs.openSync(path.join(dir, ETCD_FILES.log), 'a');
    const args = [
      '--name', name,
      '--data-dir', path.join(dir, ETCD_FILES.data),
      '--listen-client-urls', endpoint,
      '--advertise-client-urls', endpoint,
      '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `${name}=${peer}`,
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', name,
    ];
    let child: ChildProcess;
    try {
      child = spawn(etcdBin(), args, { detached: true, stdio: ['ignore', log, log] });
    } finally {
      fs.closeSync(log);
    }
    const spawned = await new Promise<{ pid?: number; error?: string }>((resolve) => {
      child.once('error', (err) => resolve({ error: err.message }));
      child.once('spawn', () => resolve({ pid: child.pid }));
    });
    if (spawned.error || !spawned.pid) throw new EtcdError(`cannot start ${etcdBin()}: ${spawned.error} (install etcd-server, or set ETCD_BIN)`, { place: etcdBin() });
    child.unref();
    const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
    const ready = await waitHealthy(endpoint, (options.readyTimeoutS ?? 30) * 1000, exited);
    if (ready === true) {
      fs.writeFileSync(path.join(dir, ETCD_FILES.pid), `${spawned.pid}\n`);
      fs.writeFileSync(path.join(dir, ETCD_FILES.env), `ETCD_ENDPOINTS=${endpoint}\nNIXL_ETCD_ENDPOINTS=${endpoint}\n`);
      return { endpoint, pid: spawned.pid, dir };
    }
    killTree(spawned.pid);
    lastProblem = ready;
    if (!/address already in use/i.test(logTail(dir))) break;
  }
  throw new EtcdError(`etcd did not come up in ${dir}: ${lastProblem}; last lines of ${ETCD_FILES.log}:\n${logTail(dir)}`, { file: dir });
}

async function waitHealthy(endpoint: string, timeoutMs: number, exited: Promise<number>): Promise<true | string> {
  const deadline = Date.now() + timeoutMs;
  let gone: number | undefined;
  void exited.then((code) => (gone = code));
  while (Date.now() < deadline) {
    if (gone !== undefined) return `etcd exited with code ${gone}`;
    const r = await etcdctl(endpoint, ['endpoint', 'health'], 5_000).catch((err: Error) => err);
    if (!(r instanceof Error)) return true;
    await new Promise((res) => setTimeout(res, 200));
  }
  return `no healthy answer at ${endpoint} within ${timeoutMs / 1000} s`;
}

function logTail(dir: string, lines = 15): string {
  try {
    return readTailSync(path.join(dir, ETCD_FILES.log), 64 * 1024).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Runs etcdctl (API v3) against `endpoint`; its stdout, or an error with its stderr. */
export async function etcdctl(endpoint: string, args: string[], timeoutMs = 10_000): Promise<string> {
  const r = await execa(etcdctlBin(), ['--endpoints', endpoint, '--dial-timeout=3s', ...args], {
    env: { ETCDCTL_API: '3' },
    reject: false,
    timeout: timeoutMs,
    stdin: 'ignore',
  });
  if (r.exitCode !== 0 || r.failed) {
    throw new EtcdError(`etcdctl ${args.join(' ')} at ${endpoint} failed (${r.timedOut ? 'timed out' : `exit code ${r.exitCode}`}): ${String(r.stderr || r.message).trim()}`, { place: endpoint });
  }
  return String(r.stdout);
}

/** Deletes every key under `prefix` (the job's namespace); returns how many there were. */
export async function wipePrefix(endpoint: string, prefix: string): Promise<number> {
  if (!prefix) throw new EtcdError('refusing to wipe an empty prefix (that is the whole etcd)');
  return Number((await etcdctl(endpoint, ['del', '--prefix', prefix])).trim() || 0);
}

/** Reads the endpoint `etcd-start` wrote into `dir`. */
export function endpointOf(dir: string): string {
  const text = readTextFileSync(path.join(dir, ETCD_FILES.env), READ_LIMITS.record);
  const endpoint = /^ETCD_ENDPOINTS=(.+)$/m.exec(text)?.[1];
  if (!endpoint) throw new EtcdError(`${path.join(dir, ETCD_FILES.env)} names no ETCD_ENDPOINTS`, { file: path.join(dir, ETCD_FILES.env), expected: 'ETCD_ENDPOINTS' });
  return endpoint;
}

/**
 * Stops the etcd `startEtcd` left in `dir` (only if that pid is still an etcd of this folder),
 * removes its data and pid files, keeps its log. Returns false when there was none to stop.
 */
export async function stopEtcd(dir: string, graceMs = 5_000): Promise<boolean> {
  const pidFile = path.join(dir, ETCD_FILES.pid);
  if (!fs.existsSync(pidFile)) return false;
  const pid = Number(readTextFileSync(pidFile, READ_LIMITS.record).trim());
  if (isOurEtcd(pid, dir)) {
    process.kill(pid, 'SIGTERM');
    if (!(await gone(pid, graceMs))) {
      process.kill(pid, 'SIGKILL');
      // Gone once the kernel has run its exit: the caller may check at once that nothing is left.
      await gone(pid, 5_000);
    }
  }
  fs.rmSync(path.join(dir, ETCD_FILES.data), { recursive: true, force: true });
  fs.rmSync(pidFile, { force: true });
  return true;
}

function isOurEtcd(pid: number, dir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || !alive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(path.join(dir, ETCD_FILES.data));
  } catch {
    return false;
  }
}

/** Waits up to `ms` for `pid` to end; whether it did. */
async function gone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
  return !alive(pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !fs.existsSync(`/proc/${pid}/stat`) || !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function killTree(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL'); // detached: its own process group
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
