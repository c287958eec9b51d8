// What a sweep rank asks of the engine beyond the backend: the NIC of --device_list (UCX's
// UCX_NET_DEVICES for this rank, as nixlbench passes device_list[rank] to its UCX backend), the
// progress thread of --enable_pt, and the lines rank 0 announces about the flags.
import type { BackendOptions } from '../../backends/registry.ts';
import type { RankInfo } from '../../rank.ts';
import { backendAvailability } from '../../backends/registry.ts';
import { ucxHasCudaSupport } from '../../backends/ucx.ts';
import { UCX_CHOICE_ENV } from '../../backends/ucx-options.ts';
import { UsageError } from '../common/options.ts';
import type { VramProbe } from './sweep-backend.ts';
import type { SweepOptions } from './sweep-options.ts';
import type { SweepRoles } from './sweep-plan.ts';

/** Lines rank 0 prints before the banner about how the flags were taken. */
export function sweepNotes(o: SweepOptions, env: NodeJS.ProcessEnv = process.env): string[] {
  const notes = [...o.nixlbench.notes];
  const dram = o.initiatorSegType === 'DRAM' || o.targetSegType === 'DRAM';
  if (o.nixlbench.hugepages && dram && o.backend === 'ucx') {
    // nixlbench allocates the huge pages and registers them with NIXL's UCX backend; so does the engine
    if (env[UCX_CHOICE_ENV.memory] === 'ucx') {
      throw new UsageError('--use_hugepages with --ucx-memory ucx (or ucx.memory: ucx): huge pages are allocated by the engine and registered with UCX, so UCX cannot also allocate them; leave one out');
    }
    notes.push('--use_hugepages: DRAM buffers are the engine\'s huge pages, registered with UCX (as NIXL registers nixlbench\'s), not UCX-allocated memory');
  }
  if (o.nixlbench.deviceList && o.scheme !== 'pairwise') {
    notes.push(`--device_list is used by the pairwise scheme only (nixlbench's rule): with ${o.scheme} UCX picks among all NICs`);
  }
  return notes;
}

/** The NIC of this rank: device_list[rank] for initiators, device_list[rank - initiators] for targets (pairwise). */
export function deviceOfRank(devices: string[], roles: SweepRoles, rank: number, mode: string): string {
  if (mode === 'MG') throw new UsageError('--device_list with --mode MG: nixlbench indexes the list by process rank, which names no NIC per device; leave it out');
  if (devices.length !== roles.initiators || devices.length !== roles.targets) {
    throw new UsageError(
      `--device_list ${devices.join(',')}: the pairwise scheme needs one device per initiator and per target (${roles.initiators} and ${roles.targets}), not ${devices.length} (nixlbench's "Incorrect device list")`,
    );
  }
  return devices[rank < roles.initiators ? rank : rank - roles.initiators];
}

export function sweepEngineOptions(o: SweepOptions, roles: SweepRoles, info: RankInfo): BackendOptions {
  const devices = o.nixlbench.deviceList;
  const netDevices = devices && o.scheme === 'pairwise' ? deviceOfRank(devices, roles, info.rank, o.nixlbench.mode) : undefined;
  if (o.backend !== 'ucx') return {};
  return { ucx: { ...(netDevices ? { netDevices } : {}), ...(o.nixlbench.progressThread ? { progressThread: true } : {}) } };
}

export function defaultVramProbe(): VramProbe {
  return { availability: backendAvailability, ucxHasCuda: ucxHasCudaSupport };
}
