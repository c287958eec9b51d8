// Where every server of a disaggregated job runs: nodes per role, GPUs, node indices and ports.
// Roles never share a node (nodes per role = ceil(world * servers / gpus_per_node), as the
// reference sizes them); generation servers come first, as in the reference's allocations.json.
import { launchesContextServers, worldSize, type ServingConfig } from '../serving-config.ts';
import { DisaggBenchError } from '../../../../runners/common/errors.ts';
import { engineOf } from '../engines/engines.ts';
import type { ErrorCategory } from '../../../../runners/common/errors.ts';

export type Role = 'CTX' | 'GEN';

export interface ServerAllocation {
  role: Role;
  /** Index within its role: CTX_0, CTX_1, GEN_0... */
  index: number;
  /** `CTX_0`, the name used in log files (3_output_CTX_0.log). */
  name: string;
  /** GPUs (= ranks) of this server: tp * pp * cp. */
  worldSize: number;
  /** Indices into the job's node list (scontrol show hostnames order). */
  nodes: number[];
  /** GPU ids it uses on each of its nodes (CUDA_VISIBLE_DEVICES). */
  gpuIds: number[];
  ntasksPerNode: number;
  /** HTTP port of the server, unique within the job. */
  port: number;
}

export interface RoleAllocation {
  servers: number;
  worldSize: number;
  nodes: number;
  /** Index of the role's first node. */
  firstNode: number;
}

export interface Allocation {
  gpusPerNode: number;
  totalNodes: number;
  totalTasks: number;
  ctx: RoleAllocation;
  gen: RoleAllocation;
  servers: ServerAllocation[];
  /** The router runs on the job's first node (where the batch script runs). */
  router: { node: number; port: number };
}

/** The first worker's port and the router's: launch.base_port / router_port, else the engine's. */
export function configPorts(config: ServingConfig): { base: number; router: number } {
  const { ports } = engineOf(config);
  return { base: config.launch?.base_port ?? ports.base, router: config.launch?.router_port ?? ports.router };
}

export class AllocationError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'AllocationError';
}

export function allocate(config: ServingConfig): Allocation {
  const gpusPerNode = config.hardware.gpus_per_node;
  const { base: basePort, router: routerPort } = configPorts(config);
  const ctxServers = launchesContextServers(config.benchmark.mode) ? config.hardware.num_ctx_servers : 0;
  const gen = roleAllocation('GEN', config.hardware.num_gen_servers, worldSize(config.worker_config.gen), gpusPerNode, 0);
  const ctx = roleAllocation('CTX', ctxServers, worldSize(config.worker_config.ctx), gpusPerNode, gen.nodes);
  const servers = [
    ...placeServers('GEN', gen, gpusPerNode),
    ...placeServers('CTX', ctx, gpusPerNode),
  ].map((server, i) => ({ ...server, port: basePort + i }));
  const totalNodes = gen.nodes + ctx.nodes;
  const clash = servers.find((s) => s.port === routerPort);
  if (clash) {
    throw new AllocationError(`router port ${routerPort} is also the port of ${clash.name}: change launch.router_port or launch.base_port`);
  }
  return {
    gpusPerNode,
    totalNodes,
    totalTasks: totalNodes * gpusPerNode,
    ctx,
    gen,
    servers,
    router: { node: 0, port: routerPort },
  };
}

/**
 * A server must fill whole nodes or fit several times into one; otherwise one server would get
 * different GPU ids on different nodes, which one CUDA_VISIBLE_DEVICES per step cannot express.
 */
export function packingProblem(world: number, gpusPerNode: number): string | undefined {
  if (world % gpusPerNode === 0 || gpusPerNode % world === 0) return undefined;
  return `a server of ${world} GPUs neither fills whole nodes of ${gpusPerNode} GPUs nor divides one`;
}

function roleAllocation(role: Role, servers: number, world: number, gpusPerNode: number, firstNode: number): RoleAllocation {
  if (servers > 0) {
    const problem = packingProblem(world, gpusPerNode);
    if (problem) throw new AllocationError(`${role}: ${problem}`);
  }
  return { servers, worldSize: world, nodes: Math.ceil((world * servers) / gpusPerNode), firstNode };
}

function placeServers(role: Role, alloc: RoleAllocation, gpusPerNode: number): Omit<ServerAllocation, 'port'>[] {
  const out: Omit<ServerAllocation, 'port'>[] = [];
  for (let index = 0; index < alloc.servers; index++) {
    const firstSlot = index * alloc.worldSize;
    const firstNode = alloc.firstNode + Math.floor(firstSlot / gpusPerNode);
    const spansNodes = alloc.worldSize >= gpusPerNode;
    const nodeCount = spansNodes ? alloc.worldSize / gpusPerNode : 1;
    const perNode = spansNodes ? gpusPerNode : alloc.worldSize;
    const firstGpu = spansNodes ? 0 : firstSlot % gpusPerNode;
    out.push({
      role,
      index,
      name: `${role}_${index}`,
      worldSize: alloc.worldSize,
      nodes: Array.from({ length: nodeCount }, (_, k) => firstNode + k),
      gpuIds: Array.from({ length: perNode }, (_, k) => firstGpu + k),
      ntasksPerNode: perNode,
    });
  }
  return out;
}
