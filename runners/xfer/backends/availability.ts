// Which backends can run here, and why not: each backend's libraries probed (and, for GPU backends,
// a GPU), without the backends themselves: a test plan asks this of every config on UCX or
// libfabric and needs none of the engine.
import { probe } from '../native/load.ts';
import { cudart } from '../native/cudart.ts';
import { libc } from '../native/libc.ts';
import { nccl } from '../native/nccl.ts';
import { ucp } from '../native/ucp.ts';
import { libfabric } from '../native/libfabric.ts';
import { backendNames, type BackendName } from './types.ts';
import { XferError } from '../errors.ts';

export type BackendAvailability = { name: BackendName; available: true; detail: string } | { name: BackendName; available: false; reason: string };

/** Whether each backend's libraries (and, for GPU backends, a GPU) are there. */
export function availableBackends(): BackendAvailability[] {
  return backendNames.map((name) => backendAvailability(name));
}

export function backendAvailability(name: BackendName): BackendAvailability {
  const check = (): string => {
    switch (name) {
      case 'shm':
        libc();
        return 'libc shared memory';
      case 'ucx':
        return `UCX ${ucp().versionString()}`;
      case 'cuda':
        return `${gpuCount()} GPU(s), CUDA runtime ${cudart().runtimeVersion()}`;
      case 'nccl':
        return `NCCL ${nccl().version()}, ${gpuCount()} GPU(s)`;
      case 'libfabric':
        return `libfabric ${libfabric().version()}`;
    }
  };
  let detail = '';
  const result = probe(() => (detail = check()));
  return result.available ? { name, available: true, detail } : { name, available: false, reason: result.reason };
}

function gpuCount(): number {
  const n = cudart().deviceCount();
  if (n === 0) throw new XferError('no CUDA device');
  return n;
}

