// Keeps a libfabric endpoint progressing while the rank does something else (waits on the store,
// checks buffers): with FI_PROGRESS_MANUAL providers (tcp, shm, udp here) a peer's fi_write or
// fi_read completes only when the *target* reads its CQ too. Where the CQ has a wait fd, it is
// polled on a koffi worker thread after fi_trywait says it is safe (an idle rank costs nothing);
// otherwise the CQ is read every millisecond. All libfabric calls stay on the main thread.
import { sleep, yieldToEventLoop } from '../clock.ts';
import { libc } from '../native/libc.ts';

const POLL_TIMEOUT_MS = 10;

export interface WaitObject {
  fd: number;
  /** fi_trywait: true when nothing is pending and the fd will signal the next event. */
  armed(): boolean;
}

export class LibfabricProgressDriver {
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  /** Why the background loop stopped on its own; check() reports it. */
  private failure: Error | undefined;

  constructor(
    /** Reads the CQ once; true when anything completed. */
    private readonly drain: () => boolean,
    private readonly wait: WaitObject | undefined,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops and waits for the outstanding poll to return (the CQ may be closed after). */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Throws if the background loop died (a CQ that cannot be read fails the transfers too). */
  check(): void {
    if (this.failure) throw this.failure;
  }

  private async run(): Promise<void> {
    try {
      let busy = 0; // turns in a row with events pending (trywait refused) but nothing completed
      while (this.running) {
        if (this.drain()) {
          busy = 0;
          await yieldToEventLoop();
        } else if (!this.wait) {
          await sleep(1);
        } else if (this.wait.armed()) {
          busy = 0;
          await libc().pollReadable(this.wait.fd, POLL_TIMEOUT_MS);
        } else {
          await (++busy < 100 ? yieldToEventLoop() : sleep(1));
        }
      }
    } catch (err) {
      this.running = false;
      this.failure = new Error(`libfabric: background progress stopped: ${(err as Error).message}`);
    }
  }
}
