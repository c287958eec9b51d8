// GPU-initiated EP dispatch/combine, as NIXL EP runs them: ONE kernel launch per phase routes
// every (token, expert) message to its expert's rank through CUDA IPC mappings of the peers'
// receive buffers, then writes the iteration number into each rank's flag area and waits, on the
// GPU, until every rank's flag for this phase has arrived in its own (backends/cuda.ts,
// device-copy/). The host only launches; timed iterations run back to back on the GPU, each
// between two CUDA events, as NIXL EP's test times them. Needs the cuda backend.
import { CudaBackend, type SignalledPhase } from '../../backends/cuda.ts';
import type { XferEngine } from '../../engine.ts';
import { XferError } from '../../errors.ts';
import type { Store } from '../../store.ts';
import type { PhaseState } from '../../device-copy/copy-table.ts';
import { combineRequests, dispatchRequests, EP_REGIONS, flagRequests, type EpLayout } from './ep-routing.ts';
import type { EpIterationRunner, EpPhase, EpPhaseProfile } from './ep-iteration.ts';

const PHASE_INDEX: Record<EpPhase, 0 | 1> = { dispatch: 0, combine: 1 };

export class GpuInitiatedRunner implements EpIterationRunner {
  readonly description = 'gpu-initiated (one kernel launch per phase: copies, then flags written into peer memory and awaited on the GPU)';
  readonly timing = 'CUDA events around each iteration, iterations back to back after one barrier (as NIXL EP times them)';
  private sequence = 0;
  private lastProfile: EpPhaseProfile[] | undefined;

  private constructor(
    private readonly backend: CudaBackend,
    private readonly store: Store,
    private readonly phases: Record<EpPhase, SignalledPhase>,
    private readonly silent: boolean,
  ) {}

  /** `silent`: the test hook that launches nothing (so writes no flags). */
  static async create(engine: XferEngine, store: Store, layout: EpLayout, silent = false): Promise<GpuInitiatedRunner> {
    const backend = engine.backend;
    if (!(backend instanceof CudaBackend)) {
      throw new XferError(`ep: --initiated-by gpu needs --backend cuda (kernels write into peers' GPU memory through CUDA IPC), not ${backend.name}`);
    }
    const me = engine.rank.rank;
    const ranks = engine.rank.worldSize;
    const phase = (p: EpPhase, requests: ReturnType<typeof dispatchRequests>) =>
      backend.prepareSignalledPhase(
        {
          requests,
          signals: flagRequests(ranks, me, PHASE_INDEX[p]).map((f) => ({ peer: f.peer, remote: f.remote, remoteOffset: f.remoteOffset })),
          wait: { local: EP_REGIONS.flags, offset: PHASE_INDEX[p] * ranks * 8, count: ranks },
        },
        engine.regions,
      );
    const phases = { dispatch: await phase('dispatch', dispatchRequests(layout, me)), combine: await phase('combine', combineRequests(layout, me)) };
    return new GpuInitiatedRunner(backend, store, phases, silent);
  }

  async iteration(phases: EpPhase[]): Promise<void> {
    const seq = ++this.sequence;
    await this.store.barrier('ep-iteration');
    if (!this.silent) await this.backend.runSignalledPhases(phases.map((p) => this.phases[p]), seq, this.store.defaultTimeoutMs);
  }

  async timed(phases: EpPhase[], count: number): Promise<number[]> {
    const first = this.sequence + 1;
    this.sequence += count;
    await this.store.barrier('ep-timed');
    if (this.silent || count === 0) return new Array<number>(count).fill(0);
    const list = phases.map((p) => this.phases[p]);
    const before = list.map((p) => this.backend.phaseState(p));
    const ms = await this.backend.runSignalledIterations(list, first, count, this.store.defaultTimeoutMs);
    this.lastProfile = phases.map((phase, i) => profileOf(phase, before[i], this.backend.phaseState(list[i])));
    return ms.map((x) => x * 1000);
  }

  profile(): EpPhaseProfile[] | undefined {
    return this.lastProfile;
  }
}

/** Means over the launches between two readings of a phase's state. */
function profileOf(phase: EpPhase, before: PhaseState, after: PhaseState): EpPhaseProfile {
  const launches = Number(after.launches - before.launches);
  const mean = (a: bigint, b: bigint) => (launches > 0 ? Number(b - a) / launches / 1000 : 0);
  return { phase, dataUs: mean(before.sumDataNs, after.sumDataNs), waitUs: mean(before.sumWaitNs, after.sumWaitNs) };
}
