// The serving loop of one server: requests wait for a free sequence of the context, a prefill runs
// one request's prompt at a time, and between prefills one batched decode step advances every
// running request by a token. A context-phase request ends after its first token (its state is
// handed over); a generation-phase request starts from a handed-over state and its first token.
import type { LlamaRuntime } from './llama-runtime.ts';

export type FinishReason = 'length' | 'stop';

export interface ServeRequest {
  prompt: readonly number[];
  maxTokens: number;
  ignoreEos: boolean;
  /**
   * full: prefill and decode here; context: prefill, then `handOver(seq)` while the sequence still
   * holds the state; generation: `load(seq)` puts the handed-over state in, then decode from `firstToken`.
   */
  phase: 'full' | 'context' | 'generation';
  firstToken?: number;
  handOver?(seq: number): void;
  load?(seq: number): Promise<void>;
  onToken(token: number): void;
  onEnd(reason: FinishReason): void;
  onError(err: unknown): void;
  /** Set by the caller when the client went away: the loop drops the request at its next step. */
  cancelled?: boolean;
}

interface Running {
  request: ServeRequest;
  seq: number;
  last: number;
  pos: number;
  generated: number;
}

export class ServeLoop {
  private readonly waiting: ServeRequest[] = [];
  private readonly free: number[];
  private readonly running: Running[] = [];
  private scheduled = false;
  /** Requests admitted and not yet ended (running, loading or prefilling). */
  inFlight = 0;

  constructor(private readonly runtime: LlamaRuntime) {
    this.free = Array.from({ length: runtime.options.slots }, (_, i) => i);
  }

  submit(request: ServeRequest): void {
    this.waiting.push(request);
    this.wake();
  }

  private wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.tick();
    });
  }

  private end(run: Pick<Running, 'request' | 'seq'>, reason?: FinishReason, err?: unknown): void {
    this.runtime.release(run.seq);
    this.free.push(run.seq);
    this.inFlight--;
    if (err !== undefined) run.request.onError(err);
    else if (reason) run.request.onEnd(reason);
  }

  /** Emits a token; whether the request is done after it. */
  private emit(run: Running, token: number): boolean {
    run.generated++;
    run.request.onToken(token);
    if (!run.request.ignoreEos && token === this.runtime.eos) {
      this.end(run, 'stop');
      return true;
    }
    if (run.generated >= run.request.maxTokens) {
      this.end(run, 'length');
      return true;
    }
    return false;
  }

  private admit(request: ServeRequest, seq: number): void {
    this.inFlight++;
    if (request.phase === 'generation') {
      request.load!(seq).then(
        () => {
          const run = { request, seq, last: request.firstToken!, pos: request.prompt.length, generated: 0 };
          if (request.cancelled) this.end(run);
          else if (!this.emit(run, run.last)) this.running.push(run);
          this.wake();
        },
        (err) => {
          this.end({ request, seq }, undefined, err);
          this.wake();
        },
      );
      return;
    }
    let first: number;
    try {
      first = this.runtime.prefill(seq, request.prompt);
      if (request.phase === 'context') request.handOver!(seq);
    } catch (err) {
      this.end({ request, seq }, undefined, err);
      return;
    }
    const run = { request, seq, last: first, pos: request.prompt.length, generated: 0 };
    if (request.phase === 'context') {
      run.generated = 1;
      request.onToken(first);
      this.end(run, 'length');
      return;
    }
    if (!this.emit(run, first)) this.running.push(run);
  }

  private tick(): void {
    for (let i = this.running.length - 1; i >= 0; i--) {
      if (this.running[i].request.cancelled) this.end(this.running.splice(i, 1)[0]);
    }
    // One prefill per tick, so running requests keep getting tokens while prompts arrive.
    const next = this.free.length > 0 ? this.waiting.shift() : undefined;
    if (next && !next.cancelled) this.admit(next, this.free.pop()!);
    if (this.running.length > 0) {
      const batch = [...this.running];
      try {
        const tokens = this.runtime.step(batch.map((r) => ({ seq: r.seq, token: r.last, pos: r.pos })));
        batch.forEach((run, i) => {
          run.last = tokens[i];
          run.pos++;
          if (this.emit(run, tokens[i])) this.running.splice(this.running.indexOf(run), 1);
        });
      } catch (err) {
        for (const run of batch) this.end(run, undefined, err);
        this.running.length = 0;
      }
    }
    if (this.running.length > 0 || (this.waiting.length > 0 && this.free.length > 0)) this.wake();
  }
}
