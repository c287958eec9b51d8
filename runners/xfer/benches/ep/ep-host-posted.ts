// The host-posted emulation of EP dispatch/combine: each phase is engine transfers posted by the
// host (any backend), then 8-byte flag writes; a rank polls its own flag area until every rank's
// flag for the iteration is there. NIXL EP moves these bytes from GPU kernels instead
// (ep-gpu-initiated.ts); this path stays for host memory, other backends and comparison. Timed
// iterations run back to back after one barrier (the flags pace the ranks), each on the host clock.
import { monoNs, pollUntil } from '../../clock.ts';
import type { Plan, XferEngine } from '../../engine.ts';
import { RankDeadError, XferError } from '../../errors.ts';
import type { Store } from '../../store.ts';
import { combineRequests, dispatchRequests, flagRequests, type EpLayout } from './ep-routing.ts';
import type { EpIterationRunner, EpPhase, EpRegions } from './ep-iteration.ts';

/** One timed iteration at a time: flags numbered by iteration, so nothing is reset between them. */
export class HostPostedRunner implements EpIterationRunner {
  readonly description = 'host-posted emulation (engine transfers posted by the host, then flag writes)';
  readonly timing = 'host clock around each iteration, iterations back to back after one barrier';
  private sequence = 0;
  private readonly ranks: number;

  private constructor(
    private readonly engine: XferEngine,
    private readonly store: Store,
    private readonly regions: EpRegions,
    private readonly plans: Record<EpPhase, [Plan, Plan]>,
    private readonly silent: boolean,
  ) {
    this.ranks = engine.rank.worldSize;
  }

  /** `silent`: the test hook that moves nothing and writes no flags. */
  static async create(engine: XferEngine, store: Store, regions: EpRegions, layout: EpLayout, silent = false): Promise<HostPostedRunner> {
    const me = engine.rank.rank;
    const everyone = Array.from({ length: engine.rank.worldSize }, (_, r) => r);
    const plans: Record<EpPhase, [Plan, Plan]> = {
      dispatch: [await engine.prepare(dispatchRequests(layout, me), everyone), await engine.prepare(flagRequests(engine.rank.worldSize, me, 0), everyone)],
      combine: [await engine.prepare(combineRequests(layout, me), everyone), await engine.prepare(flagRequests(engine.rank.worldSize, me, 1), everyone)],
    };
    return new HostPostedRunner(engine, store, regions, plans, silent);
  }

  async iteration(phases: EpPhase[]): Promise<void> {
    const seq = this.nextFlag();
    await this.store.barrier('ep-iteration');
    await this.run(phases, seq);
  }

  async timed(phases: EpPhase[], count: number): Promise<number[]> {
    await this.store.barrier('ep-timed');
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const seq = this.nextFlag(); // the flag value is written before the clock starts
      const t0 = monoNs();
      await this.run(phases, seq);
      samples.push((monoNs() - t0) / 1e3);
    }
    return samples;
  }

  /** The next iteration's number, written where this rank's flag writes read it. */
  private nextFlag(): number {
    const seq = ++this.sequence;
    const flag = Buffer.alloc(16);
    flag.writeUInt32LE(seq, 0);
    flag.writeUInt32LE(seq, 8);
    this.regions.flagSource.write(0, flag);
    return seq;
  }

  private async run(phases: EpPhase[], seq: number): Promise<void> {
    for (const phase of this.silent ? [] : phases) {
      const [data, flags] = this.plans[phase];
      await this.engine.execute(data);
      await this.engine.execute(flags); // after the data: a flag means "all my data is there"
      await this.waitFlags(phase === 'dispatch' ? 0 : 1, seq, phase);
    }
  }

  private async waitFlags(index: 0 | 1, seq: number, phase: EpPhase): Promise<void> {
    const late = () => {
      const bytes = Buffer.from(this.regions.flags.read(index * this.ranks * 8, this.ranks * 8));
      return Array.from({ length: this.ranks }, (_, r) => r).filter((r) => bytes.readUInt32LE(r * 8) < seq);
    };
    const arrived = await pollUntil(() => {
      if (this.store.deadRanks.size > 0) throw new RankDeadError(`ep ${phase}: rank(s) ${[...this.store.deadRanks].join(', ')} died`, [...this.store.deadRanks]);
      return late().length === 0;
    }, this.store.defaultTimeoutMs);
    if (!arrived) throw new XferError(`ep ${phase} iteration ${seq}: no completion flag from rank(s) ${late().join(', ')} within ${this.store.defaultTimeoutMs / 1000} s`);
  }
}
