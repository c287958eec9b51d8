// The start order of nixlbench's ASIO runtime (`--runtime_type ASIO`): two processes, no etcd.
// The process that binds --asio_address:--asio_port is rank 0, the other connect()s once, with no
// retry: a connect before the listen fails the run ("ASIO Connection failed"), and on one host two
// processes started together race for the bind. So the first task of the start order picks the
// address (loopback on one node, its reachable address otherwise) and a free port, starts
// nixlbench, and once the port is in LISTEN on its host publishes `address:port` in the job's log
// folder (shared by the job's nodes); the other task waits for that file, then starts. A probe
// connect cannot stand in for the file: nixlbench would accept it as its peer.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { reachableHost } from './etcd.ts';
import { FailureError } from '../common/errors.ts';
import { freePort } from '../common/free-port.ts';

/** Written by the listening task: `address:port`. */
export const ASIO_ENDPOINT_FILE = 'asio-endpoint.txt';

export interface AsioEndpoint {
  address: string;
  port: number;
}

/**
 * The listener's endpoint: loopback when the job has one node, else this host's reachable address.
 * The port is leased and below the kernel's ephemeral range (common/free-port.ts): a port the
 * kernel picks comes from that range, where any process's outgoing connection or port-0 listener
 * may take it before nixlbench binds it, and the port would then be published as listening.
 */
export async function pickAsioEndpoint(nodes: number): Promise<AsioEndpoint> {
  const address = nodes > 1 ? reachableHost() : '127.0.0.1';
  return { address, port: await freePort(address) };
}

/** Whether a socket of this host (network namespace) listens on `port` (/proc/net/tcp and tcp6). */
export function listensOn(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // `  sl  local_address rem_address   st ...`: local `ADDR:PORT` (hex), state 0A = LISTEN
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(`:${hex}`)) return true;
    }
  }
  return false;
}

/**
 * Publishes the endpoint once the port listens, polling while `running()` (the tool may fail
 * before it binds: then nothing is published and the other task times out naming this one).
 */
export async function announceWhenListening(logDir: string, endpoint: AsioEndpoint, running: () => boolean, timeoutS: number): Promise<boolean> {
  const deadline = Date.now() + timeoutS * 1000;
  while (running() && Date.now() < deadline) {
    if (listensOn(endpoint.port)) {
      const file = path.join(logDir, ASIO_ENDPOINT_FILE);
      fs.writeFileSync(`${file}.part`, `${endpoint.address}:${endpoint.port}\n`);
      fs.renameSync(`${file}.part`, file);
      return true;
    }
    await sleep(50);
  }
  return false;
}

/**
 * Waits for the listener's endpoint file; stops at once when `listenerEnded()` says the listener's
 * tool already ended without listening.
 */
export async function awaitAsioEndpoint(logDir: string, task: number, listener: number, timeoutS: number, listenerEnded: () => string | undefined = () => undefined): Promise<AsioEndpoint> {
  const file = path.join(logDir, ASIO_ENDPOINT_FILE);
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, 'utf8').trim();
      const at = text.lastIndexOf(':');
      return { address: text.slice(0, at), port: Number(text.slice(at + 1)) };
    }
    const ended = listenerEnded();
    if (ended) throw new FailureError(`task ${task}: ${ended} without listening on its ASIO port; not started (see its log)`);
    if (Date.now() > deadline) {
      throw new FailureError(`task ${task}: task ${listener} did not listen on its ASIO port within ${timeoutS} s (did it fail? see its log)`);
    }
    await sleep(100);
  }
}
