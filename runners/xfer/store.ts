// The rendezvous store as a rank uses it: rank 0 serves it, every rank (rank 0 too) is a client.
import type { RankInfo } from './rank.ts';
import { StoreClient } from './store/client.ts';
import { StoreServer } from './store/server.ts';
import { jobSecretOf } from '../common/job-secret.ts';

const LOOPBACK = '127.0.0.1';

export { StoreClient, type WaitOptions } from './store/client.ts';
export { StoreServer } from './store/server.ts';

/** A rank's handle on the store. */
export type Store = StoreClient;

export interface StoreOptions {
  /** Default timeout of every wait, barrier and collective. Default: XFER_TIMEOUT_S or 300 s. */
  timeoutMs?: number;
  /** How long ranks keep trying to reach rank 0. Default: XFER_CONNECT_TIMEOUT_S, else the larger of the wait timeout and 60 s. */
  connectTimeoutMs?: number;
  /** On close, how long rank 0 keeps serving until the other ranks have left. Default 30 s. */
  drainMs?: number;
  /** Skip the clock-offset estimate (saves a few round trips). */
  skipClockSync?: boolean;
  /**
   * Whether this rank serves the store (default: rank 0). Another rank may serve where the peers
   * know its address (LMCache's --host/--port name the receiver); clock offsets stay relative to
   * rank 0, which then assumes its clock is the server's (true on one host).
   */
  serve?: boolean;
}

/** Connects this rank to the store; rank 0 starts the server first and stops it on close(). */
export async function openStore(info: RankInfo, options: StoreOptions = {}): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs();
  const secret = jobSecretOf();
  // Every rank on this node: the store listens on loopback only; across nodes, everywhere, and the job's secret admits.
  const oneNode = info.localWorldSize === info.worldSize;
  const server =
    (options.serve ?? info.rank === 0)
      ? await StoreServer.start({ worldSize: info.worldSize, job: info.job, ports: info.storePorts, host: oneNode ? LOOPBACK : undefined, secret })
      : undefined;
  try {
    const store = await StoreClient.connect({
      rank: info.rank,
      worldSize: info.worldSize,
      job: info.job,
      endpoints: server
        ? [{ host: LOOPBACK, port: server.port }]
        : (oneNode ? [LOOPBACK] : info.storeHosts).flatMap((host) => info.storePorts.map((port) => ({ host, port }))),
      secret,
      connectTimeoutMs: options.connectTimeoutMs ?? secondsFromEnv('XFER_CONNECT_TIMEOUT_S') ?? Math.max(timeoutMs, 60_000),
      timeoutMs,
    });
    if (server) store.afterClose((drainMs) => server.close(drainMs ?? options.drainMs ?? 30_000));
    if (!options.skipClockSync) await store.syncClock();
    return store;
  } catch (err) {
    await server?.close(0);
    throw err;
  }
}

export function defaultTimeoutMs(): number {
  return secondsFromEnv('XFER_TIMEOUT_S') ?? 300_000;
}

function secondsFromEnv(name: string): number | undefined {
  const seconds = Number(process.env[name]);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
