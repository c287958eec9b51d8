// The router's config (trtllm-serve disaggregated -c server_config.yaml): its own host and port
// and the URLs of the context and generation servers. Host names are `<nodeN>` here; the job
// script replaces them with the allocation's node names before starting the router.
import { stringify } from 'yaml';
import type { Allocation, Role } from './allocation.ts';

export function nodePlaceholder(index: number): string {
  return `<node${index}>`;
}

export function serverConfigTemplate(allocation: Allocation): string {
  const urls = (role: Role) =>
    allocation.servers.filter((s) => s.role === role).map((s) => `${nodePlaceholder(s.nodes[0])}:${s.port}`);
  const ctx = urls('CTX');
  const gen = urls('GEN');
  return stringify({
    hostname: nodePlaceholder(allocation.router.node),
    port: allocation.router.port,
    backend: 'pytorch',
    context_servers: { num_instances: ctx.length, urls: ctx },
    generation_servers: { num_instances: gen.length, urls: gen },
  });
}
