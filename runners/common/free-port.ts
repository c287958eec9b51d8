// TCP ports free on this host now, for a server that some process binds a moment later (etcd,
// the local PostgreSQL, the tests' stand-in servers; the transfer engine's stores derive theirs
// from the job id instead). Two races stand between the probe and the bind, and both were hit on
// loaded test runs:
// - An outgoing connection is given a port from the kernel's ephemeral range
//   (/proc/sys/net/ipv4/ip_local_port_range): ports are chosen below it.
// - Another process probes the same port and binds it first: every port handed out is leased for
//   LEASE_MS in a folder on this host (one file per port, created exclusively), and a port leased
//   by anyone is not handed out again until its lease ends. The lease covers the gap between the
//   probe and the bind (seconds to minutes: a job that waits in a queue); once bound, the port
//   is not free anyway.
// The range also stays clear of the ports the project binds on purpose: the local SLURM clusters
// (16000-21999: scripts/slurm-local.sh, the tests' faults and netns clusters) and the stores'
// derived ports (from DERIVED_PORT_BASE, runners/xfer/rank.ts).
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, chmodSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EnvironmentError } from './errors.ts';

/** Where the search starts: above the local clusters' ports. */
const LOWEST = 22_000;
/** Where it ends at the latest: below the stores' derived ports (rank.ts's DERIVED_PORT_BASE). */
const HIGHEST = 29_500;
const ATTEMPTS = 200;
/** How long a port handed out stays leased (a test's job may wait that long before binding it). */
const LEASE_MS = 30 * 60_000;
/** Host-wide, so not under TMPDIR (which a SLURM job may point at a folder of its own). */
const LEASE_DIR = path.join(existsSync('/tmp') ? '/tmp' : tmpdir(), 'disagg-port-leases');

/** A free port on `host` ('0.0.0.0': every interface). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return freePortRange(1, host);
}

/** The first of `count` consecutive ports free on `host` and leased to the caller, below the ephemeral range where it leaves room. */
export async function freePortRange(count: number, host = '127.0.0.1'): Promise<number> {
  const top = Math.min(HIGHEST, ephemeralLow()) - count;
  const [low, high] = top - LOWEST >= 1000 ? [LOWEST, top] : [LOWEST, 65_536 - count];
  sweepLeases();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const first = low + Math.floor(Math.random() * (high - low));
    const ports = Array.from({ length: count }, (_, i) => first + i);
    // Past half the attempts, leases are ignored: a host whose range is all leased still gets a free port.
    const leased = attempt < ATTEMPTS / 2 ? lease(ports) : [];
    if (leased === undefined) continue;
    if ((await Promise.all(ports.map((port) => portFree(port, host)))).every(Boolean)) return first;
    release(leased);
  }
  if (count === 1) return kernelPort(host);
  throw new EnvironmentError(`no ${count} consecutive free TCP ports found on ${host} in ${ATTEMPTS} tries between ${low} and ${high}`);
}

/** Whether `port` can be listened on at `host` now. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * Leases the ports a caller chose itself (a cluster's fixed slot) as freePort leases its own: true
 * when none was leased by anyone else (then they are the caller's for LEASE_MS), false when one was.
 * It says nothing of whether they are free now: probe them with portFree after.
 */
export function leasePorts(ports: number[]): boolean {
  sweepLeases();
  return lease(ports) !== undefined;
}

/**
 * Leases every port of `ports`: the lease files made (all of them), or undefined when one is
 * leased by someone else. A folder that cannot be written (another user's) leases nothing: [].
 */
function lease(ports: number[]): string[] | undefined {
  const made: string[] = [];
  for (const port of ports) {
    const file = path.join(LEASE_DIR, String(port));
    const claimed = claim(file);
    if (claimed === 'unwritable') return made;
    if (claimed === 'taken') {
      release(made);
      return undefined;
    }
    made.push(file);
  }
  return made;
}

function claim(file: string): 'claimed' | 'taken' | 'unwritable' {
  try {
    mkdirSync(LEASE_DIR, { recursive: true, mode: 0o1777 });
    closeSync(openSync(file, 'wx'));
    return 'claimed';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') return 'unwritable';
  }
  if (!expired(file)) return 'taken';
  // An expired lease is taken over by renaming it away: of two takers only one rename succeeds.
  const stale = `${file}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(file, stale);
    unlinkSync(stale);
    closeSync(openSync(file, 'wx'));
    return 'claimed';
  } catch {
    return 'taken';
  }
}

function expired(file: string, afterMs = LEASE_MS): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > afterMs;
  } catch {
    return false; // gone this instant: someone else is taking it over
  }
}

function release(files: string[]): void {
  for (const file of files) {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
}

let swept = false;
/**
 * Removes long-expired leases, once per process, so the folder holds only recent ports. Twice the
 * lease: a lease that just expired may be being taken over (claim), and this must not remove the
 * new one.
 */
function sweepLeases(): void {
  if (swept) return;
  swept = true;
  try {
    mkdirSync(LEASE_DIR, { recursive: true, mode: 0o1777 });
    chmodSync(LEASE_DIR, 0o1777); // mkdir's mode passes through the umask; every user leases here
  } catch {
    // not ours to change: leases work as far as the folder lets them
  }
  let names: string[];
  try {
    names = readdirSync(LEASE_DIR);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(LEASE_DIR, name);
    if (/^\d+$/.test(name) && expired(file, 2 * LEASE_MS)) release([file]);
  }
}

/** The kernel's ephemeral range's first port (Linux's default where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** A port the kernel picks (from the ephemeral range): the last resort. */
function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
