// The libfabric backend's operation contexts: one slot of native memory per operation in flight
// (FI_CONTEXT2 asks for 64 bytes of provider scratch there), which request of which run (one
// execute(); several may be in flight at once) it belongs to, and the completions read from the
// CQ handed to that run, whoever reads them. A run that failed or timed out leaves its slots in
// flight; their late completions free them and are otherwise ignored.
import koffi from 'koffi';
import { monoNs } from '../clock.ts';
import { FI_CONTEXT2_BYTES } from '../native/libfabric-abi.ts';
import type { CqOps } from '../native/libfabric.ts';
import type { RequestTiming } from './types.ts';

/** Completions read per fi_cq_read. */
const BATCH = 64;

export interface FabricRun {
  readonly timings: RequestTiming[];
  /** Operations posted and not complete. */
  readonly open: number;
  /** A slot's context for request `index`, or undefined when all are in flight. */
  acquire(index: number): bigint | undefined;
  /** Gives back a context whose post the provider refused (-FI_EAGAIN). */
  release(context: bigint): void;
  /** Request indices in flight. */
  openRequests(): number[];
  /** The first operation that completed in error, if any. */
  readonly failure: { requestIndex: number; message: string } | undefined;
  /** Reads of the CQ in a row that completed nothing (the caller's wait policy). */
  idle: number;
  end(): void;
}

export class FabricContexts {
  private readonly memory: Buffer;
  private readonly base: bigint;
  /** Per slot: the request index it serves, and the run (generation) it belongs to; -1 = free. */
  private readonly request: Int32Array;
  private readonly generation: Int32Array;
  private readonly free: number[];
  private readonly entries = Buffer.alloc(8 * BATCH);
  /** Runs not ended, by generation. */
  private readonly runs = new Map<number, Run>();
  private generations = 0;

  constructor(readonly slots: number) {
    this.memory = Buffer.alloc(slots * FI_CONTEXT2_BYTES);
    this.base = koffi.address(this.memory) as bigint;
    this.request = new Int32Array(slots).fill(-1);
    this.generation = new Int32Array(slots).fill(-1);
    this.free = Array.from({ length: slots }, (_, i) => slots - 1 - i);
  }

  begin(requests: number): FabricRun {
    const run = new Run(this, ++this.generations, requests);
    this.runs.set(run.gen, run);
    return run;
  }

  /** Reads one batch of completions and hands them to their run; true when anything completed. */
  drain(cq: CqOps): boolean {
    const n = cq.read(this.entries);
    if (n === 0) return false;
    if (n < 0) {
      const error = cq.readErr();
      const slot = this.slotOf(error.context);
      if (slot !== undefined) this.complete(slot, error.message);
      return true;
    }
    for (let i = 0; i < n; i++) {
      const slot = this.slotOf(this.entries.readBigUInt64LE(8 * i));
      if (slot !== undefined) this.complete(slot);
    }
    return true;
  }

  /** Internal (Run): takes a free slot for request `index` of run `gen`. */
  take(gen: number, index: number): bigint | undefined {
    const slot = this.free.pop();
    if (slot === undefined) return undefined;
    this.request[slot] = index;
    this.generation[slot] = gen;
    return this.base + BigInt(slot * FI_CONTEXT2_BYTES);
  }

  /** Internal (Run): frees the slot of a context. */
  give(context: bigint): void {
    const slot = this.slotOf(context);
    if (slot !== undefined) this.freeSlot(slot);
  }

  /** Internal (Run): slots in flight of run `gen`. */
  inFlight(gen: number): number[] {
    const out: number[] = [];
    this.generation.forEach((g, slot) => g === gen && out.push(this.request[slot]));
    return out;
  }

  /** Internal (Run): the run is over. */
  finish(run: Run): void {
    this.runs.delete(run.gen);
  }

  private complete(slot: number, error?: string): void {
    this.runs.get(this.generation[slot])?.completed(this.request[slot], error);
    this.freeSlot(slot);
  }

  private freeSlot(slot: number): void {
    if (this.generation[slot] === -1) return;
    this.request[slot] = -1;
    this.generation[slot] = -1;
    this.free.push(slot);
  }

  private slotOf(context: bigint): number | undefined {
    const offset = context - this.base;
    if (offset < 0n || offset % BigInt(FI_CONTEXT2_BYTES) !== 0n) return undefined;
    const slot = Number(offset / BigInt(FI_CONTEXT2_BYTES));
    return slot < this.slots ? slot : undefined;
  }
}

class Run implements FabricRun {
  readonly timings: RequestTiming[];
  open = 0;
  idle = 0;
  failure: { requestIndex: number; message: string } | undefined;

  constructor(
    private readonly pool: FabricContexts,
    readonly gen: number,
    requests: number,
  ) {
    this.timings = Array.from({ length: requests }, () => ({ postNs: 0, doneNs: 0 }));
  }

  acquire(index: number): bigint | undefined {
    const context = this.pool.take(this.gen, index);
    if (context !== undefined) this.open++;
    return context;
  }

  release(context: bigint): void {
    this.pool.give(context);
    this.open--;
  }

  openRequests(): number[] {
    return this.pool.inFlight(this.gen);
  }

  completed(index: number, error?: string): void {
    this.open--;
    this.timings[index].doneNs = monoNs();
    if (error !== undefined && !this.failure) this.failure = { requestIndex: index, message: error };
  }

  end(): void {
    this.pool.finish(this);
  }
}
