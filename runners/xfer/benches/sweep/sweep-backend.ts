// Which backend a sweep runs on when --backend is not given: shm for DRAM on both sides (one node,
// the engine's fastest host path), and for VRAM a backend that moves GPU memory: cuda (CUDA IPC,
// copy engines), else ucx when its CUDA transport is installed; with neither, one sentence saying
// why each is unavailable, before anything is allocated.
import type { BackendAvailability } from '../../backends/registry.ts';
import type { BackendName } from '../../backends/types.ts';
import { UsageError } from '../common/options.ts';
import type { SweepOptions } from './sweep-options.ts';

/** GPU-memory backends in order of preference for a sweep without --backend. */
const VRAM_CHOICES: BackendName[] = ['cuda', 'ucx'];

export interface VramProbe {
  availability(name: BackendName): BackendAvailability;
  /** Whether the installed UCX has a CUDA transport (ucx moves GPU memory only then). */
  ucxHasCuda(): boolean;
}

export function chooseSweepBackend(o: Pick<SweepOptions, 'backend' | 'backendGiven' | 'initiatorSegType' | 'targetSegType'>, probe: VramProbe): BackendName {
  const vram = o.initiatorSegType === 'VRAM' || o.targetSegType === 'VRAM';
  if (o.backendGiven || !vram) return o.backend;
  const reasons: string[] = [];
  for (const name of VRAM_CHOICES) {
    const a = probe.availability(name);
    if (!a.available) reasons.push(`${name}: ${a.reason}`);
    else if (name === 'ucx' && !probe.ucxHasCuda()) reasons.push('ucx: this UCX has no CUDA transport (no libuct_cuda module)');
    else return name;
  }
  throw new UsageError(`VRAM segments need a backend that moves GPU memory, and none can run here (${reasons.join('; ')})`);
}
