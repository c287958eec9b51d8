// A loop that keeps a transport progressing in the background while the rank does something else
// (ucx-progress.ts, libfabric-progress.ts): started once, stopped (and awaited) before the
// transport is destroyed; if a turn throws, the loop stops and check() reports why.
import { XferError } from '../errors.ts';

export abstract class BackgroundLoop {
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private failure: XferError | undefined;

  constructor(private readonly backend: string) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops and waits for the outstanding turn to return (the transport may be destroyed after). */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Throws if the loop died: what it progresses cannot be progressed, transfers fail with it. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  /** One round: progress, then wait (yield, sleep or poll) before the next. */
  protected abstract turn(): Promise<void>;

  private async run(): Promise<void> {
    try {
      while (this.running) await this.turn();
    } catch (err) {
      this.running = false;
      this.failure = new XferError(`${this.backend}: background progress stopped: ${(err as Error).message}`);
    }
  }
}
