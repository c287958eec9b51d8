// Keeps a libfabric endpoint progressing while the rank does something else (waits on the store,
// checks buffers): with FI_PROGRESS_MANUAL providers (tcp, shm, udp here) a peer's fi_write or
// fi_read completes only when the *target* reads its CQ too. Where the CQ has a wait fd, it is
// polled on a koffi worker thread after fi_trywait says it is safe (an idle rank costs nothing);
// otherwise the CQ is read every millisecond. All libfabric calls stay on the main thread.
import { sleep, yieldToEventLoop } from '../clock.ts';
import { libc } from '../native/libc.ts';
import { BackgroundLoop } from './background-loop.ts';

const POLL_TIMEOUT_MS = 10;

export interface WaitObject {
  fd: number;
  /** fi_trywait: true when nothing is pending and the fd will signal the next event. */
  armed(): boolean;
}

export class LibfabricProgressDriver extends BackgroundLoop {
  /** Turns in a row with events pending (fi_trywait refused) but nothing completed. */
  private busy = 0;

  constructor(
    /** Reads the CQ once; true when anything completed. */
    private readonly drain: () => boolean,
    private readonly wait: WaitObject | undefined,
  ) {
    super('libfabric');
  }

  protected async turn(): Promise<void> {
    if (this.drain()) {
      this.busy = 0;
      await yieldToEventLoop();
    } else if (!this.wait) {
      await sleep(1);
    } else if (this.wait.armed()) {
      this.busy = 0;
      await libc().pollReadable(this.wait.fd, POLL_TIMEOUT_MS);
    } else {
      await (++this.busy < 100 ? yieldToEventLoop() : sleep(1));
    }
  }
}
