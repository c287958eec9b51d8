// A rank's connection to the rendezvous store. Every wait carries a timeout; failures come back as
// typed errors naming the ranks that never arrived or died.
import net from 'node:net';
import { monoNs, estimateOffset, sleep, type ClockOffset, type ClockSample } from '../clock.ts';
import { RankDeadError, StoreTimeoutError, XferError } from '../errors.ts';
import { jobProof } from '../../common/job-secret.ts';
import { encodeLine, formatSeconds, helloContext, readLines, type CollectiveKind, type Reply, type Request, type WireError } from './protocol.ts';

type RequestBody = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export interface ConnectOptions {
  rank: number;
  worldSize: number;
  job: string;
  /** Where to look for the store, in order (host candidates x port candidates). */
  endpoints: { host: string; port: number }[];
  /** How long to keep trying while rank 0 is not up yet. */
  connectTimeoutMs: number;
  /** Default timeout of every wait. */
  timeoutMs: number;
  /** The job's secret, proven in the hello (the store refuses a hello without it when it has one). */
  secret?: string;
}

export interface WaitOptions {
  /** Participating ranks (default: all). Every participant passes the same list. */
  ranks?: number[];
  timeoutMs?: number;
}

export class StoreClient {
  /** Ranks reported dead by the store (their connection dropped without saying goodbye). */
  readonly deadRanks = new Set<number>();
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; what: string }>();
  private readonly callCounts = new Map<string, number>();
  private readonly deadListeners = new Set<(rank: number, reason: string) => void>();
  private nextId = 1;
  private closed = false;
  private clock: ClockOffset = { offsetNs: 0, rttNs: 0 };
  private readonly closeHooks: ((drainMs?: number) => Promise<void>)[] = [];

  private constructor(
    private readonly socket: net.Socket,
    received: string,
    readonly rank: number,
    readonly worldSize: number,
    readonly defaultTimeoutMs: number,
    endpoint: string,
  ) {
    readLines(socket, (m) => this.onMessage(m as Reply), () => {}, received);
    socket.resume();
    socket.on('error', () => {});
    socket.on('close', () => {
      const error = new RankDeadError(`rank ${rank}: connection to the store (rank 0, ${endpoint}) was lost`, [0]);
      if (!this.closed) this.deadRanks.add(0);
      for (const p of this.pending.values()) p.reject(this.closed ? new XferError(`store closed during ${p.what}`) : error);
      this.pending.clear();
    });
  }

  static async connect(options: ConnectOptions): Promise<StoreClient> {
    const deadline = Date.now() + options.connectTimeoutMs;
    const problems = new Map<string, string>();
    // Ranks usually start within ms of rank 0: retry soon at first, then less often.
    let retryMs = 10;
    let helloCount = 0;
    for (;;) {
      for (const { host, port } of options.endpoints) {
        const attempt = await tryHello(options, host, port, ++helloCount);
        if (attempt.socket) {
          const client = new StoreClient(attempt.socket, attempt.rest ?? '', options.rank, options.worldSize, options.timeoutMs, `${host}:${port}`);
          for (const r of attempt.dead) client.deadRanks.add(r);
          return client;
        }
        problems.set(`${host}:${port}`, attempt.problem);
        // Refused by this job's own store (a wrong or missing secret): trying again cannot help.
        if (attempt.refusedByOwnJob) throw new XferError(`rank ${options.rank}: cannot reach the store (rank 0): ${host}:${port}: ${attempt.problem}`);
      }
      if (Date.now() >= deadline) {
        throw new StoreTimeoutError(
          `rank ${options.rank}: cannot reach the store (rank 0) within ${formatSeconds(options.connectTimeoutMs)}: ` +
            `${[...problems].map(([where, why]) => `${where}: ${why}`).join('; ')} (set MASTER_ADDR/MASTER_PORT to rank 0's address if it is not one of these)`,
          'store connection',
          [0],
          options.connectTimeoutMs,
        );
      }
      await sleep(Math.min(retryMs, Math.max(0, deadline - Date.now())));
      retryMs = Math.min(retryMs * 2, 100);
    }
  }

  /** Offset of this rank's monotonic clock to rank 0's (refresh with syncClock). */
  get clockOffset(): ClockOffset {
    return this.clock;
  }

  /** Converts a local monoNs() time to rank 0's clock. */
  toRank0Ns(localNs: number): number {
    return localNs + this.clock.offsetNs;
  }

  async syncClock(rounds = 8): Promise<ClockOffset> {
    const samples: ClockSample[] = [];
    for (let i = 0; i < rounds; i++) {
      const sentNs = monoNs();
      const { monoNs: remoteNs } = (await this.call({ op: 'time' }, 'clock sync')) as { monoNs: number };
      samples.push({ sentNs, remoteNs, receivedNs: monoNs() });
    }
    this.clock = this.rank === 0 ? { offsetNs: 0, rttNs: estimateOffset(samples).rttNs } : estimateOffset(samples);
    return this.clock;
  }

  onRankDead(listener: (rank: number, reason: string) => void): () => void {
    this.deadListeners.add(listener);
    return () => this.deadListeners.delete(listener);
  }

  /**
   * Whether the store has seen `rank` die, giving it up to `graceMs` to say so: a transfer error
   * usually reaches a rank before the store's word that its peer's connection dropped, and on a
   * loaded machine that word can take seconds. Used only on failure paths, so the grace is cheap.
   */
  async learnIfDead(rank: number, graceMs = 10_000): Promise<boolean> {
    if (this.deadRanks.has(rank)) return true;
    let timer: NodeJS.Timeout | undefined;
    let unsubscribe: () => void = () => {};
    const told = await new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
      unsubscribe = this.onRankDead((dead) => dead === rank && resolve(true));
    });
    clearTimeout(timer);
    unsubscribe();
    return told;
  }

  async set(key: string, value: unknown): Promise<void> {
    await this.call({ op: 'set', key, value }, `set '${key}'`);
  }

  async get<T>(key: string): Promise<T | undefined> {
    const r = (await this.call({ op: 'get', key }, `get '${key}'`)) as { found: boolean; value?: T };
    return r.found ? r.value : undefined;
  }

  /** Waits until `key` is set; fails at once if rank `from` (its writer) dies. */
  async wait<T>(key: string, options: { from?: number; timeoutMs?: number } = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    return (await this.call({ op: 'wait', key, from: options.from ?? null, timeoutMs }, `wait for '${key}'`, timeoutMs)) as T;
  }

  async barrier(name: string, options: WaitOptions = {}): Promise<void> {
    await this.collective('barrier', name, null, options);
  }

  /** Every participant's value, indexed by rank (holes for non-participants). */
  async allGather<T>(name: string, value: T, options: WaitOptions = {}): Promise<T[]> {
    return this.byRank<T>(await this.collective('gather', name, value, options), options);
  }

  /** `values[r]` goes to rank r; returns what each participant sent to this rank, indexed by rank. */
  async allToAll<T>(name: string, values: readonly (T | undefined)[], options: WaitOptions = {}): Promise<T[]> {
    return this.byRank<T>(await this.collective('alltoall', name, values.map((v) => v ?? null), options), options);
  }

  /**
   * Says goodbye (so rank 0 does not report this rank dead) and closes the connection. On rank 0
   * the server then keeps serving until the other ranks have left, at most `drainMs` (default: the
   * store's drain setting), so they can still learn from it which rank failed.
   */
  async close(drainMs?: number): Promise<void> {
    if (this.closed) return;
    try {
      await this.call({ op: 'bye' }, 'goodbye', 5_000);
    } catch {
      // rank 0 may already be gone; nothing to tell it then
    }
    this.closed = true;
    this.socket.end();
    for (const hook of this.closeHooks) await hook(drainMs);
  }

  /**
   * Leaving after a failure: rank 0 keeps serving until every other rank has left (at most the
   * wait timeout), so each of them learns from the store which rank failed, whenever its own
   * wait or transfer gives up (a transfer to a dead peer may take seconds to fail).
   */
  async closeAfterFailure(): Promise<void> {
    await this.close(this.defaultTimeoutMs).catch(() => {});
  }

  /** Runs `hook` at the end of close() (rank 0 stops its server there). */
  afterClose(hook: (drainMs?: number) => Promise<void>): void {
    this.closeHooks.push(hook);
  }

  private byRank<T>(values: unknown, options: WaitOptions): T[] {
    const ranks = this.participants(options);
    const out = new Array<T>(this.worldSize);
    ranks.forEach((r, i) => (out[r] = (values as T[])[i]));
    return out;
  }

  private participants(options: WaitOptions): number[] {
    return options.ranks ? [...new Set(options.ranks)].sort((a, b) => a - b) : Array.from({ length: this.worldSize }, (_, i) => i);
  }

  private collective(kind: CollectiveKind, name: string, value: unknown, options: WaitOptions): Promise<unknown> {
    const ranks = this.participants(options);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const countKey = `${kind}:${name}:${ranks.join(',')}`;
    const count = (this.callCounts.get(countKey) ?? 0) + 1;
    this.callCounts.set(countKey, count);
    const key = `${countKey}#${count}`;
    // This rank alone: nothing to wait for, the answer is its own value (a one-rank world's
    // barrier per iteration would otherwise cost a store round trip each).
    if (ranks.length === 1 && ranks[0] === this.rank && !this.closed) {
      return Promise.resolve(kind === 'gather' ? [value] : kind === 'alltoall' ? [(value as unknown[])[this.rank]] : null);
    }
    return this.call({ op: 'collective', kind, name, key, ranks, value, timeoutMs }, `${kind} '${name}'`, timeoutMs);
  }

  /** Sends one request; a local timer (a little past the server's) guards against a silent store. */
  private call(body: RequestBody, what: string, serverTimeoutMs = 30_000): Promise<unknown> {
    if (this.closed) return Promise.reject(new XferError(`rank ${this.rank}: store already closed (${what})`));
    if (this.socket.destroyed) return Promise.reject(new RankDeadError(`rank ${this.rank}: store connection is gone (${what})`, [0]));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const guardMs = serverTimeoutMs + 5_000;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new StoreTimeoutError(`rank ${this.rank}: no answer from the store to ${what} within ${formatSeconds(guardMs)}`, what, [0], guardMs));
      }, guardMs);
      this.pending.set(id, {
        what,
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.socket.write(encodeLine({ ...body, id }));
    });
  }

  private onMessage(message: Reply): void {
    if ('event' in message) {
      this.deadRanks.add(message.rank);
      for (const listener of this.deadListeners) listener(message.rank, message.reason);
      return;
    }
    const p = this.pending.get(message.id);
    if (!p) return;
    this.pending.delete(message.id);
    if (message.ok) p.resolve(message.value);
    else p.reject(toError(this.rank, message.error));
  }
}

function toError(rank: number, e: WireError): Error {
  const message = `rank ${rank}: ${e.message}`;
  if (e.kind === 'timeout') return new StoreTimeoutError(message, e.what ?? '', e.ranks ?? [], e.timeoutMs ?? 0);
  if (e.kind === 'dead') return new RankDeadError(message, e.ranks ?? []);
  return new XferError(message);
}

/** Connects and says hello; a refused port, another job's store or a silent service are problems, not errors. */
async function tryHello(
  options: ConnectOptions,
  host: string,
  port: number,
  attempt: number,
): Promise<{ socket?: net.Socket; rest?: string; dead: number[]; problem: string; refusedByOwnJob?: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    const give = (problem: string, refusedByOwnJob = false) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.destroy();
      resolve({ dead: [], problem, refusedByOwnJob });
    };
    const timer = setTimeout(() => give('no answer to hello within 3 s'), 3_000);
    socket.once('error', (err) => give(err.message));
    socket.once('close', () => give('connection closed before hello was answered'));
    socket.once('connect', () => {
      const proof = options.secret === undefined ? undefined : jobProof(options.secret, helloContext(options));
      socket.write(encodeLine({ id: 0, op: 'hello', rank: options.rank, worldSize: options.worldSize, job: options.job, attempt, ...(proof ? { proof } : {}) }));
    });
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      let reply: Reply;
      try {
        reply = JSON.parse(buffered.slice(0, newline)) as Reply;
      } catch {
        return give('not a store (unreadable answer)');
      }
      if (!('ok' in reply) || !reply.ok) {
        const error = 'error' in reply ? reply.error : undefined;
        return give(error?.message || 'hello refused', error?.job === options.job);
      }
      clearTimeout(timer);
      // Keeping this connection: from now on its loss tells the store this rank died.
      socket.write(encodeLine({ id: 0, op: 'attach' }));
      socket.pause(); // nothing may flow until the client's reader is attached
      socket.removeAllListeners();
      resolve({ socket, rest: buffered.slice(newline + 1), dead: (reply.value as { dead?: number[] })?.dead ?? [], problem: '' });
    };
    socket.on('data', onData);
  });
}

