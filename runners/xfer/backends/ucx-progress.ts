// Keeps a UCX worker progressing while the rank does something else (waits on the store, sleeps):
// over tcp and other emulated transports a peer's put/get completes only when the *target* worker
// progresses. Where this node's ranks fit its CPUs, for a millisecond after the worker last found
// work it is progressed at every turn of the event loop (a peer in the middle of a benchmark sends
// the next request within microseconds); after that, and always where the ranks outnumber the CPUs
// (a spinning rank would take a core from one that has work), its event fd is polled on a koffi
// worker thread, so an idle rank costs nothing and the event loop is never blocked. All UCX calls
// stay on the main thread.
import os from 'node:os';
import { monoNs, yieldToEventLoop } from '../clock.ts';
import { libc } from '../native/libc.ts';
import type { Ucp } from '../native/ucp.ts';
import { BackgroundLoop } from './background-loop.ts';

const POLL_TIMEOUT_MS = 50;
/**
 * How long the worker keeps being progressed (a turn of the event loop each time) after it last
 * found work, before waiting on the event fd: over tcp a peer's get or put completes only when this
 * worker answers, and a wake through the fd and Node's event loop costs far more than the answer.
 */
const SPIN_AFTER_WORK_NS = 1_000_000;
/** Progress calls in a row before yielding to the event loop. */
const BURST = 64;

export class UcxProgressDriver extends BackgroundLoop {
  /** When a progress call last found work (monoNs). */
  private lastWorkNs = 0;

  /** How long to keep progressing after work (0: wait on the event fd at once). */
  private readonly spinNs: number;

  constructor(
    private readonly ucp: Ucp,
    private readonly worker: bigint,
    private readonly eventFd: number,
    ranksOnNode: number,
  ) {
    super('ucx');
    this.spinNs = ranksOnNode <= os.availableParallelism() ? SPIN_AFTER_WORK_NS : 0;
  }

  /** Progresses until idle (or BURST calls); returns whether anything happened. */
  drain(): boolean {
    this.check();
    let any = false;
    for (let i = 0; i < BURST; i++) {
      if (this.ucp.workerProgress(this.worker) === 0) break;
      any = true;
    }
    if (any) this.lastWorkNs = monoNs();
    return any;
  }

  protected async turn(): Promise<void> {
    if (!this.drain() && monoNs() - this.lastWorkNs >= this.spinNs && this.ucp.workerArm(this.worker)) {
      await libc().pollReadable(this.eventFd, POLL_TIMEOUT_MS);
      return;
    }
    await yieldToEventLoop();
  }
}
