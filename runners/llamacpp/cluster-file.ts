// The deployment file the router and every server read (the job writes it as the engine's router
// config, node addresses filled in when the job runs): the router's place, each role's servers
// (URL and node index), and how the KV cache is handed over (the transfer engine's backend and the
// address of its rendezvous store, served by the first context server).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { InputError } from '../common/errors.ts';

export interface ClusterServer {
  url: string;
  node: number;
}

export interface ClusterFile {
  hostname: string;
  port: number;
  context_servers: ClusterServer[];
  generation_servers: ClusterServer[];
  /** backend auto: shm when every server's address is this host's (loopback), else UCX. */
  kv_transfer: { backend: 'auto' | 'shm' | 'ucx'; store_host: string; store_port: number; job: string };
}

export function readClusterFile(file: string): ClusterFile {
  let parsed: ClusterFile;
  try {
    parsed = parse(readFileSync(file, 'utf8')) as ClusterFile;
  } catch (err) {
    throw new InputError(`cannot read the deployment file: ${(err as Error).message}`, { file });
  }
  const ok =
    parsed && Array.isArray(parsed.context_servers) && Array.isArray(parsed.generation_servers) && parsed.kv_transfer && typeof parsed.kv_transfer.store_port === 'number';
  if (!ok) throw new InputError('the deployment file lacks context_servers, generation_servers or kv_transfer', { file });
  return parsed;
}

/** A server's rank in the hand-over's world: context servers first, then generation servers. */
export function kvRank(cluster: ClusterFile, role: 'ctx' | 'gen', index: number): number {
  return role === 'ctx' ? index : cluster.context_servers.length + index;
}

/** `http://host:port` of a URL written without a scheme. */
export function httpUrl(url: string): string {
  return /^https?:\/\//.test(url) ? url : `http://${url}`;
}
