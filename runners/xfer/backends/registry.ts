// Which backends exist, which can run here (and why not), and how to create one.
import { probe } from '../native/load.ts';
import { cudart } from '../native/cudart.ts';
import { libc } from '../native/libc.ts';
import { nccl } from '../native/nccl.ts';
import { ucp } from '../native/ucp.ts';
import { libfabric } from '../native/libfabric.ts';
import { CudaBackend, type CudaOptions } from './cuda.ts';
import { NcclBackend } from './nccl.ts';
import { ShmBackend, type ShmOptions } from './shm.ts';
import { backendNames, type Backend, type BackendContext, type BackendName } from './types.ts';
import { UcxBackend, type UcxOptions } from './ucx.ts';
import { LibfabricBackend, type LibfabricOptions } from './libfabric.ts';
import { XferError } from '../errors.ts';
import { UsageError } from '../../common/errors.ts';

export interface BackendOptions {
  shm?: ShmOptions;
  ucx?: UcxOptions;
  cuda?: CudaOptions;
  libfabric?: LibfabricOptions;
}

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

export function createBackend(name: BackendName, ctx: BackendContext, options: BackendOptions = {}): Backend {
  switch (name) {
    case 'shm':
      return new ShmBackend(ctx, options.shm);
    case 'ucx':
      return new UcxBackend(ctx, options.ucx);
    case 'cuda':
      return new CudaBackend(ctx, options.cuda);
    case 'nccl':
      return new NcclBackend(ctx);
    case 'libfabric':
      return new LibfabricBackend(ctx, options.libfabric);
    default:
      throw new UsageError(`unknown backend '${name as string}' (known: ${backendNames.join(', ')})`);
  }
}
