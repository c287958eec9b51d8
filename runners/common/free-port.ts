// TCP ports free on this host now, for a server that some process binds a moment later (etcd,
// the tests' stand-in servers; the transfer engine's stores derive theirs from the job id
// instead). They are chosen below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range): a port from that range can be given to any outgoing
// connection between the probe and the bind, and on a busy host it was (a loaded test run lost a
// rank's store to it). What is left is a race with another process choosing the same port, which
// callers that can retry do (etcd.ts).
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Where the search starts: well above the ports services are configured on. */
const LOWEST = 20_000;
const ATTEMPTS = 200;

/** A free port on `host` ('0.0.0.0': every interface). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return freePortRange(1, host);
}

/** The first of `count` consecutive ports free on `host`, below the ephemeral range where it leaves room. */
export async function freePortRange(count: number, host = '127.0.0.1'): Promise<number> {
  const below = ephemeralLow() - count;
  const [low, high] = below - LOWEST >= 1000 ? [LOWEST, below] : [LOWEST, 65_536 - count];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const first = low + Math.floor(Math.random() * (high - low));
    const ports = Array.from({ length: count }, (_, i) => first + i);
    if ((await Promise.all(ports.map((port) => portFree(port, host)))).every(Boolean)) return first;
  }
  if (count === 1) return kernelPort(host);
  throw new Error(`no ${count} consecutive free TCP ports found on ${host} in ${ATTEMPTS} tries between ${low} and ${high}`);
}

/** Whether `port` can be listened on at `host` now. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(true)));
  });
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
