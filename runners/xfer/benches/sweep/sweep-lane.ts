// One lane (nixlbench thread) of a sweep step and its transfer's lifecycle, as nixlbench's
// execTransferLoop runs it: by default the transfer is built once, at the slot's first post (Prep),
// and posted every iteration; --recreate_xfer rebuilds it before every iteration after the first (each rebuild is
// a Prep sample and part of the timed loop); --reregister_mem also registers the iteration's local
// blocks before the rebuild and deregisters them after the transfer, so registration is measured.
// With --pipeline_depth each slot of a lane is a SweepLane of its own (sweep-pipeline.ts): a slot
// is rebuilt (and re-registered) as its own request completes, as nixlbench recycles a slot.
import { monoNs } from '../../clock.ts';
import type { Plan, XferEngine } from '../../engine.ts';
import type { XferRequest, XferResult } from '../../backends/types.ts';

export interface LaneLifecycle {
  recreateXfer: boolean;
  reregisterMem: boolean;
}

export class SweepLane {
  /** Microseconds of each build (with its registration under --reregister_mem). */
  readonly prepUs: number[] = [];
  private plan: Plan | undefined;
  private spans: { release(): void }[] = [];
  private iterations = 0;

  constructor(
    private readonly engine: XferEngine,
    private readonly requests: XferRequest[],
    private readonly participants: number[] | undefined,
    private readonly lifecycle: LaneLifecycle,
  ) {}

  /** Builds the transfer (and registers its blocks under --reregister_mem), timed as one Prep sample. */
  async prepare(): Promise<void> {
    const t0 = monoNs();
    if (this.lifecycle.reregisterMem) {
      this.spans = this.requests.map((r) => this.engine.registerSpan(r.local, r.localOffset, r.length));
    }
    this.plan = await this.engine.prepare(this.requests, this.participants);
    this.prepUs.push((monoNs() - t0) / 1e3);
  }

  /** One iteration: built first at the first one, rebuilt first when --recreate_xfer says so. */
  async iterate(): Promise<XferResult> {
    return (await this.post()).done;
  }

  /**
   * iterate() in two steps: resolves once the iteration's transfer is posted (after its rebuild),
   * with `done` settling when it completes. A two-sided pipeline posts its slots in this order.
   */
  async post(): Promise<{ done: Promise<XferResult> }> {
    // built at its first post (as nixlbench's slots, inside the loop's timer), rebuilt when --recreate_xfer says so
    if (!this.plan || (this.lifecycle.recreateXfer && this.iterations > 0)) await this.prepare();
    this.iterations++;
    return { done: this.complete(this.engine.post(this.plan!).done) };
  }

  private async complete(done: Promise<XferResult>): Promise<XferResult> {
    const result = await done;
    if (this.lifecycle.recreateXfer) this.release();
    return result;
  }

  /** Deregisters what --reregister_mem registered for the current build. */
  release(): void {
    for (const span of this.spans.splice(0)) span.release();
  }
}
