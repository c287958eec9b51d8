// Keeps a UCX worker progressing while the rank does something else (waits on the store, sleeps):
// over tcp and other emulated transports a peer's put/get completes only when the *target* worker
// progresses. The worker's event fd is polled on a koffi worker thread, so an idle rank costs
// nothing and the event loop is never blocked; all UCX calls stay on the main thread.
import { yieldToEventLoop } from '../clock.ts';
import { libc } from '../native/libc.ts';
import type { Ucp } from '../native/ucp.ts';
import { BackgroundLoop } from './background-loop.ts';

const POLL_TIMEOUT_MS = 50;
/** Progress calls in a row before yielding to the event loop. */
const BURST = 64;

export class UcxProgressDriver extends BackgroundLoop {
  constructor(
    private readonly ucp: Ucp,
    private readonly worker: bigint,
    private readonly eventFd: number,
  ) {
    super('ucx');
  }

  /** Progresses until idle (or BURST calls); returns whether anything happened. */
  drain(): boolean {
    this.check();
    let any = false;
    for (let i = 0; i < BURST; i++) {
      if (this.ucp.workerProgress(this.worker) === 0) break;
      any = true;
    }
    return any;
  }

  protected async turn(): Promise<void> {
    if (this.drain() || !this.ucp.workerArm(this.worker)) await yieldToEventLoop();
    else await libc().pollReadable(this.eventFd, POLL_TIMEOUT_MS);
  }
}
