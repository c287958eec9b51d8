// The KV hand-over through the project's transfer engine (runners/xfer), as NIXL moves it for
// TensorRT-LLM: every server of the deployment is a rank of one transfer world and registers one
// host region of hand-over slots. A context server writes a finished prefill's state into a slot of
// its region; the generation server READs it (one-sided) into a slot of its own, then loads it.
import { crc32 } from 'node:zlib';
import { XferEngine, openStore, rankFromEnv, type RankInfo, type Region, type Store } from '../xfer/index.ts';
import type { ClusterFile } from './cluster-file.ts';

export const KV_REGION = 'kv';

const isLoopback = (host: string) => host === 'localhost' || /^127\./.test(host);
const hostOf = (url: string) => new URL(/^https?:\/\//.test(url) ? url : `http://${url}`).hostname;

/**
 * The backend and this server's node name: `auto` is shm when every server listens on a loopback
 * address (one host, as the local scheduler's nodes are), else UCX; ranks on one host share a node name.
 */
export function handoverBackend(cluster: ClusterFile, selfUrl: string): { backend: 'shm' | 'ucx'; node: string } {
  const hosts = [...cluster.context_servers, ...cluster.generation_servers].map((s) => hostOf(s.url));
  const oneHost = hosts.every(isLoopback);
  const backend = cluster.kv_transfer.backend === 'auto' ? (oneHost ? 'shm' : 'ucx') : cluster.kv_transfer.backend;
  return { backend, node: oneHost ? 'this-host' : hostOf(selfUrl) };
}

/** This server's place in the deployment's transfer world: its rank, and the world's store and job. */
export function kvRankInfo(cluster: ClusterFile, rank: number, selfUrl: string): RankInfo {
  const { store_host, store_port, job } = cluster.kv_transfer;
  return rankFromEnv({
    RANK: String(rank),
    WORLD_SIZE: String(cluster.context_servers.length + cluster.generation_servers.length),
    LOCAL_RANK: '0',
    LOCAL_WORLD_SIZE: '1',
    MASTER_ADDR: store_host,
    MASTER_PORT: String(store_port),
    XFER_JOB_ID: job,
    XFER_NODE: handoverBackend(cluster, selfUrl).node,
    PATH: process.env.PATH,
  });
}

export class KvLink {
  private constructor(
    readonly engine: XferEngine,
    private readonly store: Store,
    readonly region: Region,
    readonly slotBytes: number,
    readonly slots: number,
  ) {}

  /** Joins the transfer world (collective: returns once every server has joined) with `slots` slots of `slotBytes`. */
  static async open(cluster: ClusterFile, rank: number, selfUrl: string, slots: number, slotBytes: number): Promise<KvLink> {
    const { backend } = handoverBackend(cluster, selfUrl);
    const info = kvRankInfo(cluster, rank, selfUrl);
    const store = await openStore(info, { skipClockSync: true, drainMs: 1000 });
    const engine = await XferEngine.create({ backend, rank: info, store });
    const region = engine.allocate(KV_REGION, slots * slotBytes, 'host');
    await engine.connect();
    return new KvLink(engine, store, region, slotBytes, slots);
  }

  slotOffset(slot: number): number {
    return slot * this.slotBytes;
  }

  /** Copies `length` bytes of `peer`'s region at `remoteOffset` into this server's slot; the transfer's time (ms). */
  async pull(peer: number, remoteOffset: number, length: number, slot: number): Promise<number> {
    const result = await this.engine.transfer([
      { op: 'READ', peer, local: KV_REGION, localOffset: this.slotOffset(slot), remote: KV_REGION, remoteOffset, length },
    ]);
    return (result.endNs - result.startNs) / 1e6;
  }

  async close(): Promise<void> {
    await this.engine.destroy().catch(() => undefined);
    await this.store.close().catch(() => undefined);
  }
}

/** A checksum of the bytes handed over, so that a byte dropped or reordered on the way is caught. */
export function checksum(bytes: Uint8Array): string {
  return crc32(bytes).toString(16).padStart(8, '0');
}
