// nixlbench's runtimes for processes started on their own (one terminal per process, no launcher):
// ETCD (--etcd_endpoints, --benchmark_group): a rank by order of arrival under
// xferbench/<group>/ (`/size`, `/rank/<n>`: nixlbench's own spelling), as nixlbench's etcd runtime registers, and the namespace
// removed at the end; ASIO (--runtime_type ASIO, --asio_address/--asio_port): two processes, the
// one that binds the port is rank 0. Then the ranks meet in the engine's store, whose address rank
// 0 publishes in etcd (ETCD) or answers on the ASIO port (ASIO).
// Each process is its own node-local world (local rank 0): pick its GPU with CUDA_VISIBLE_DEVICES,
// as with nixlbench.
import net from 'node:net';
import os from 'node:os';
import { sleep } from '../../clock.ts';
import { EtcdKv } from '../../etcd-kv.ts';
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import { UsageError } from '../common/options.ts';
import type { SweepOptions } from './sweep-options.ts';
import { XferError } from '../../errors.ts';
import { JOB_SECRET_VARIABLE, jobProof, jobSecretOf, provesJobSecret } from '../../../common/job-secret.ts';

export interface RuntimeRank {
  info: RankInfo;
  /** Run after the sweep (ETCD: removes xferbench/<group>/, as nixlbench does). */
  cleanup(): Promise<void>;
}

/** Processes nixlbench's runtime expects: num_initiator_dev + num_target_dev in SG (its defaults 1 + 1), 2 in MG. */
export function runtimeWorldSize(o: Pick<SweepOptions, 'numInitiatorDev' | 'numTargetDev' | 'nixlbench'>): number {
  return o.nixlbench.mode === 'MG' ? 2 : (o.numInitiatorDev ?? 1) + (o.numTargetDev ?? 1);
}

/**
 * The rank of this process when nixlbench's runtime flags say how processes meet; undefined when
 * none were given. Under a launcher (srun, torchrun, mpirun) or with --ranks they are refused: the
 * launcher already gives the ranks.
 */
export async function runtimeRank(o: SweepOptions, launched: boolean, ranksGiven: boolean, env: NodeJS.ProcessEnv = process.env): Promise<RuntimeRank | undefined> {
  const r = o.nixlbench.runtime;
  if (r.given.length === 0) return undefined;
  const flags = r.given.map((f) => `--${f}`).join(', ');
  if (launched || ranksGiven) {
    throw new UsageError(`${flags}: ${launched ? 'the launcher (srun, torchrun or mpirun)' : '--ranks'} already gives the ranks; nixlbench's runtimes are for processes started on their own`);
  }
  if (r.type === 'ASIO') return asioRank(o, env);
  if (!r.etcdEndpoints) {
    throw new UsageError(`${flags}: nixlbench's ETCD runtime needs --etcd_endpoints here (without it the sweep starts its ranks itself, --ranks N)`);
  }
  return etcdRank(o, env);
}

async function etcdRank(o: SweepOptions, env: NodeJS.ProcessEnv): Promise<RuntimeRank> {
  const { etcdEndpoints, benchmarkGroup } = o.nixlbench.runtime;
  const kv = new EtcdKv(etcdEndpoints!);
  const prefix = `xferbench/${benchmarkGroup}/`;
  // nixlbench's keys carry a double slash (its makeKey appends "/" + name to a namespace that
  // already ends in one): xferbench/<group>//size, xferbench/<group>//rank/<n>
  const key = (name: string) => `${prefix}/${name}`;
  const world = runtimeWorldSize(o);
  console.log(`Connecting to ETCD at ${kv.endpoint}`);
  let rank = 0;
  for (;;) {
    const size = await kv.get(key('size'));
    rank = size ? Number(size.value) : 0;
    if (await kv.putIfUnchanged(key('size'), size?.modRevision ?? '0', { [key('size')]: String(rank + 1), [key(`rank/${rank}`)]: 'active' })) break;
  }
  if (rank >= world) {
    await kv.deletePrefix(prefix);
    throw new XferError(
      `Rank ${rank} is greater than or equal to global size ${world} (nixlbench's ETCD runtime: more processes registered under ${prefix} than ` +
        `num_initiator_dev + num_target_dev, or keys of an earlier run were left there; they are removed now)`,
    );
  }
  console.log(`ETCD Runtime: Registered as rank ${rank} item ${rank + 1} of ${world}`);
  const registered = (await kv.get(key('rank/0')))?.modRevision ?? '0';
  // No port in the record: every rank derives the store's candidate ports from the job id (rank.ts)
  // and rank 0 listens on the first free one, so no port is probed here and bound later.
  let store: { host: string; job: string; registered: string };
  if (rank === 0) {
    store = { host: reachableAddress(), job: `etcd:${kv.endpoint}:${benchmarkGroup}:${registered}`, registered };
    await kv.put(`${prefix}disagg-store`, JSON.stringify(store));
  } else {
    store = await waitForStore(kv, `${prefix}disagg-store`, registered);
  }
  const info = rankFromEnv({
    RANK: String(rank),
    WORLD_SIZE: String(world),
    LOCAL_RANK: '0',
    LOCAL_WORLD_SIZE: '1',
    MASTER_ADDR: store.host,
    XFER_JOB_ID: store.job,
    XFER_NODE: env.XFER_NODE,
  });
  return { info, cleanup: () => kv.deletePrefix(prefix) };
}

/** Rank 0's store address of this run (written after rank 0 registered, so a stale one is skipped). */
async function waitForStore(kv: EtcdKv, key: string, registered: string): Promise<{ host: string; job: string; registered: string }> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await kv.get(key);
    if (value) {
      const parsed = JSON.parse(value.value) as { host: string; job: string; registered: string };
      if (parsed.registered === registered) return parsed;
    }
    if (Date.now() > deadline) throw new XferError(`rank 0 did not publish its store address under ${key} within 120 s`);
    await sleep(100);
  }
}

async function asioRank(o: SweepOptions, env: NodeJS.ProcessEnv): Promise<RuntimeRank> {
  const { asioAddress, asioPort } = o.nixlbench.runtime;
  if (runtimeWorldSize(o) !== 2) {
    throw new UsageError(`--runtime_type ASIO: nixlbench's ASIO runtime joins exactly 2 processes, not num_initiator_dev + num_target_dev = ${runtimeWorldSize(o)}`);
  }
  // The process that binds the ASIO port is rank 0 and keeps it bound for the run, answering the
  // other process with where its store listens; the other one connects and is rank 1.
  // The store's ports derive from the job id on both sides (rank.ts): nothing is probed and bound later.
  const store = { job: `asio:${asioAddress}:${asioPort}:${process.pid}` };
  const secret = jobSecretOf(env);
  const beacon = await bindBeacon(asioAddress, asioPort, `${JSON.stringify(store)}\n`, secret);
  let meeting = store;
  if (!beacon) {
    console.log('ASIO runtime bind/listen error -- using connect() instead');
    meeting = await askBeacon(asioAddress, asioPort, secret);
  }
  const rank = beacon ? 0 : 1;
  const info = rankFromEnv({
    RANK: String(rank),
    WORLD_SIZE: '2',
    LOCAL_RANK: '0',
    LOCAL_WORLD_SIZE: '1',
    MASTER_ADDR: asioAddress,
    XFER_JOB_ID: meeting.job,
    XFER_NODE: env.XFER_NODE,
  });
  return { info, cleanup: () => new Promise<void>((resolve) => (beacon ? beacon.close(() => resolve()) : resolve())) };
}

/** What a beacon's client proves the job's secret over. */
const beaconContext = (port: number) => `asio-beacon\u0000${port}`;
/** The most a beacon reads of a client's proof line, and how long it waits for it. */
const PROOF_LINE_BYTES = 1024;
const PROOF_WAIT_MS = 5_000;

/**
 * Binds `host`:`port` exclusively (only where the other process is told to connect, --asio_address:
 * on any other host the bind fails and this process is rank 1) and answers each connection with
 * `line`. With the job's secret, only a connection whose first line proves it is answered; others
 * get a refusal. Undefined when the port is taken or the address is not this host's.
 */
function bindBeacon(host: string, port: number, line: string, secret: string | undefined): Promise<net.Server | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => {
      socket.on('error', () => socket.destroy());
      // What the other process writes (its proof line) is read even when unchecked: unread, it would hold the connection open.
      if (secret === undefined) return void socket.resume().end(line);
      let data = '';
      const refuse = () => socket.end(`${JSON.stringify({ refused: `this connection did not prove the job's secret (${JOB_SECRET_VARIABLE}); not answered` })}\n`);
      socket.setTimeout(PROOF_WAIT_MS, refuse);
      socket.on('data', (chunk) => {
        data += chunk;
        const end = data.indexOf('\n');
        if (end < 0 && data.length < PROOF_LINE_BYTES) return;
        socket.removeAllListeners('data');
        socket.resume();
        socket.setTimeout(0);
        let proof: unknown;
        try {
          proof = (JSON.parse(data.slice(0, end < 0 ? PROOF_LINE_BYTES : end)) as { proof?: unknown }).proof;
        } catch {
          proof = undefined;
        }
        if (provesJobSecret(secret, beaconContext(port), proof)) socket.end(line);
        else refuse();
      });
    });
    server.once('error', () => resolve(undefined));
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

/**
 * Rank 0's store address, from its beacon on the ASIO port (retried while it is not up yet). A
 * listener that is not a beacon (another service on the port) is named at once, not waited on.
 */
async function askBeacon(host: string, port: number, secret: string | undefined): Promise<{ job: string }> {
  const deadline = Date.now() + 120_000;
  const hello = `${JSON.stringify({ proof: secret === undefined ? null : jobProof(secret, beaconContext(port)) })}\n`;
  for (;;) {
    const line = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect({ host, port }, () => socket.write(hello));
      let data = '';
      socket.setTimeout(5_000, () => socket.destroy()); // a listener that never answers
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('close', () => resolve(undefined));
      socket.on('error', () => resolve(undefined));
    });
    if (line) return beaconReply(line, host, port);
    if (Date.now() > deadline) throw new XferError(`ASIO runtime: nothing answered at ${host}:${port} within 120 s (is the other process started?)`);
    await sleep(100);
  }
}

function beaconReply(line: string, host: string, port: number): { job: string } {
  let reply: { job?: unknown; refused?: unknown } = {};
  try {
    reply = JSON.parse(line) as typeof reply;
  } catch {
    // not JSON: named below
  }
  if (typeof reply?.job === 'string') return { job: reply.job };
  if (typeof reply?.refused === 'string') {
    throw new XferError(`ASIO runtime: the process at ${host}:${port} refused this one: ${reply.refused}; start both with the same ${JOB_SECRET_VARIABLE}`);
  }
  throw new XferError(`ASIO runtime: something else listens at ${host}:${port} (it answered ${JSON.stringify(line.slice(0, 80))}, not the other process's address); choose another --asio_port`);
}

/** This host's first non-loopback IPv4 address (peers on other hosts reach the store there), else loopback. */
function reachableAddress(): string {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}
