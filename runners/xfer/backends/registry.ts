// Which backends exist and how to create one; which can run here (and why not) is availability.ts,
// re-exported here.
import { CudaBackend, type CudaOptions } from './cuda.ts';
import { NcclBackend } from './nccl.ts';
import { ShmBackend, type ShmOptions } from './shm.ts';
import { backendNames, type Backend, type BackendContext, type BackendName } from './types.ts';
import { UcxBackend, type UcxOptions } from './ucx.ts';
import { LibfabricBackend, type LibfabricOptions } from './libfabric.ts';
import { UsageError } from '../../common/errors.ts';

export { availableBackends, backendAvailability, type BackendAvailability } from './availability.ts';

export interface BackendOptions {
  shm?: ShmOptions;
  ucx?: UcxOptions;
  cuda?: CudaOptions;
  libfabric?: LibfabricOptions;
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
