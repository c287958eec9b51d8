// The rendezvous store served by rank 0: keys, waits and collectives (barrier, all-gather,
// all-to-all) over TCP. It knows which ranks are connected, so a wait that cannot complete fails at
// once when a rank it needs drops, and a timeout names the ranks that never arrived.
import net from 'node:net';
import { describeRanks, XferError } from '../errors.ts';
import { JOB_SECRET_VARIABLE, provesJobSecret } from '../../common/job-secret.ts';
import {
  collectiveLabel,
  helloContext,
  encodeLine,
  formatSeconds,
  readLines,
  type CollectiveKind,
  type Request,
  type WireError,
} from './protocol.ts';

interface Waiter {
  socket: net.Socket;
  id: number;
}

interface Collective {
  kind: CollectiveKind;
  name: string;
  ranks: number[];
  arrived: Map<number, { waiter: Waiter; value: unknown }>;
  timer: NodeJS.Timeout;
}

interface KeyWait {
  waiter: Waiter;
  key: string;
  from: number | null;
  timer: NodeJS.Timeout;
}

export interface StoreServerOptions {
  worldSize: number;
  /** Identifies the job: clients of another job (stale port) are turned away. */
  job: string;
  /** Ports to try in order; the first free one is used. */
  ports: number[];
  /** Where to listen (default 0.0.0.0): loopback when every rank is on this node. */
  host?: string;
  /** The job's secret (common/job-secret.ts): a hello that does not prove it is refused. Undefined: the job id alone admits. */
  secret?: string;
}

export class StoreServer {
  readonly port: number;
  private readonly kv = new Map<string, unknown>();
  private readonly keyWaits = new Set<KeyWait>();
  private readonly collectives = new Map<string, Collective>();
  /** Collectives that failed: late arrivals get the same error at once. */
  private readonly failed = new Map<string, WireError>();
  private readonly sockets = new Map<number, net.Socket>();
  /** Connections whose rank took the hello's answer (see the 'attach' request). */
  private readonly attached = new WeakSet<net.Socket>();
  /** Which of its rank's hellos a connection carried. */
  private readonly helloAttempt = new WeakMap<net.Socket, number>();
  private readonly everConnected = new Set<number>();
  private readonly departed = new Set<number>();
  private readonly dead = new Map<number, string>();
  private readonly allDeparted: Promise<void>;
  private resolveAllDeparted!: () => void;

  private constructor(
    private readonly server: net.Server,
    private readonly options: StoreServerOptions,
  ) {
    this.port = (server.address() as net.AddressInfo).port;
    this.allDeparted = new Promise((resolve) => (this.resolveAllDeparted = resolve));
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(options: StoreServerOptions): Promise<StoreServer> {
    let lastError: Error | undefined;
    for (const port of options.ports) {
      const server = net.createServer();
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ port, host: options.host ?? '0.0.0.0', exclusive: true }, () => resolve());
        });
        return new StoreServer(server, options);
      } catch (err) {
        lastError = err as Error;
        server.close();
      }
    }
    throw new XferError(`store: cannot listen on any of ports ${options.ports.join(', ')}: ${lastError?.message}`);
  }

  /** Waits until every rank has left (cleanly or not), at most `timeoutMs`, then stops listening. */
  async close(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.allDeparted, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    for (const c of this.collectives.values()) clearTimeout(c.timer);
    for (const w of this.keyWaits) clearTimeout(w.timer);
    for (const socket of this.sockets.values()) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    let rank = -1;
    readLines(
      socket,
      (message) => {
        const request = message as Request;
        if (request.op === 'hello') rank = this.hello(socket, request);
        else if (rank < 0) this.fail({ socket, id: request.id }, { kind: 'invalid', message: 'store: hello expected first' });
        else if (request.op === 'attach') this.attach(rank, socket);
        else this.handle(rank, socket, request);
      },
      () => socket.destroy(),
    );
    socket.on('error', () => {}); // 'close' follows and does the bookkeeping
    socket.on('close', () => {
      if (rank < 0 || this.sockets.get(rank) !== socket) return;
      this.sockets.delete(rank);
      // A loaded machine can answer a hello later than the rank waits for it: the rank drops that
      // connection and says hello again. Only a connection it kept can tell of its death.
      if (this.attached.has(socket) && !this.departed.has(rank)) this.markDead(rank, 'its store connection was lost');
      this.checkAllDeparted();
    });
  }

  private hello(socket: net.Socket, hello: Extract<Request, { op: 'hello' }>): number {
    const waiter = { socket, id: hello.id };
    const { worldSize, job, secret } = this.options;
    // Before anything else is answered: a job id alone (squeue shows it to everyone) admits no one.
    if (secret !== undefined && !provesJobSecret(secret, helloContext(hello), hello.proof)) {
      this.fail(waiter, { kind: 'invalid', job, message: `store: this hello does not carry job ${job}'s secret (${JOB_SECRET_VARIABLE} of the job's environment); refused` });
      socket.end();
      return -1;
    }
    if (hello.job !== job || hello.worldSize !== worldSize) {
      this.fail(waiter, { kind: 'invalid', message: `store of job '${job}' (${worldSize} ranks), not '${hello.job}' (${hello.worldSize} ranks)` });
      socket.end();
      return -1;
    }
    const earlier = this.sockets.get(hello.rank);
    if (!Number.isInteger(hello.rank) || hello.rank < 0 || hello.rank >= worldSize || (earlier && this.attached.has(earlier))) {
      this.fail(waiter, { kind: 'invalid', message: `store: rank ${hello.rank} is out of range or already connected` });
      socket.end();
      return -1;
    }
    // A hello the rank gave up on (never attached) is replaced by its retry; one read late, after
    // its retry's, is the stale one.
    const attempt = hello.attempt ?? 1;
    if (earlier && (this.helloAttempt.get(earlier) ?? 1) > attempt) {
      this.fail(waiter, { kind: 'invalid', message: `store: rank ${hello.rank} already said hello again (attempt ${this.helloAttempt.get(earlier)}, this is ${attempt})` });
      socket.end();
      return -1;
    }
    this.helloAttempt.set(socket, attempt);
    this.sockets.set(hello.rank, socket);
    earlier?.destroy();
    this.reply(waiter, { dead: [...this.dead.keys()] });
    return hello.rank;
  }

  private attach(rank: number, socket: net.Socket): void {
    if (this.sockets.get(rank) !== socket) return;
    this.attached.add(socket);
    this.everConnected.add(rank);
  }

  private handle(rank: number, socket: net.Socket, request: Request): void {
    const waiter = { socket, id: request.id };
    switch (request.op) {
      case 'set':
        this.kv.set(request.key, request.value);
        this.reply(waiter);
        for (const w of [...this.keyWaits]) if (w.key === request.key) this.finishKeyWait(w, request.value);
        return;
      case 'get':
        this.reply(waiter, this.kv.has(request.key) ? { found: true, value: this.kv.get(request.key) } : { found: false });
        return;
      case 'wait':
        return this.waitKey(waiter, request);
      case 'collective':
        return this.arrive(rank, waiter, request);
      case 'time':
        this.reply(waiter, { monoNs: Number(process.hrtime.bigint()), epochMs: Date.now() });
        return;
      case 'bye':
        this.departed.add(rank);
        this.reply(waiter);
        // A collective that waits for a rank that has left would wait out its limit: it fails now.
        for (const [key, c] of [...this.collectives]) {
          if (c.ranks.includes(rank) && !c.arrived.has(rank)) this.failCollective(key, this.deadError(collectiveLabel(c.kind, c.name), [rank]));
        }
        return;
      default:
        this.fail(waiter, { kind: 'invalid', message: `store: unknown op '${(request as { op: string }).op}'` });
    }
  }

  private waitKey(waiter: Waiter, request: Extract<Request, { op: 'wait' }>): void {
    if (this.kv.has(request.key)) return this.reply(waiter, this.kv.get(request.key));
    if (request.from !== null && this.dead.has(request.from)) {
      return this.fail(waiter, this.deadError(`wait for key '${request.key}'`, [request.from]));
    }
    const wait: KeyWait = {
      waiter,
      key: request.key,
      from: request.from,
      timer: setTimeout(() => {
        this.keyWaits.delete(wait);
        const source = request.from === null ? '' : ` (expected from rank ${request.from})`;
        this.fail(waiter, {
          kind: 'timeout',
          what: `key '${request.key}'`,
          message: `wait for key '${request.key}' timed out after ${formatSeconds(request.timeoutMs)}${source}`,
          ranks: request.from === null ? [] : [request.from],
          timeoutMs: request.timeoutMs,
        });
      }, request.timeoutMs),
    };
    this.keyWaits.add(wait);
  }

  private finishKeyWait(wait: KeyWait, value: unknown): void {
    clearTimeout(wait.timer);
    this.keyWaits.delete(wait);
    this.reply(wait.waiter, value);
  }

  private arrive(rank: number, waiter: Waiter, request: Extract<Request, { op: 'collective' }>): void {
    const label = collectiveLabel(request.kind, request.name);
    const earlier = this.failed.get(request.key);
    if (earlier) return this.fail(waiter, { ...earlier, message: `${earlier.message} (rank ${rank} arrived late)` });
    if (!request.ranks.includes(rank)) {
      return this.fail(waiter, { kind: 'invalid', message: `${label}: rank ${rank} is not among its ranks ${request.ranks.join(', ')}` });
    }
    let c = this.collectives.get(request.key);
    if (!c) {
      c = {
        kind: request.kind,
        name: request.name,
        ranks: request.ranks,
        arrived: new Map(),
        timer: setTimeout(() => this.timeOut(request.key, request.timeoutMs), request.timeoutMs),
      };
      this.collectives.set(request.key, c);
    } else if (c.ranks.join(',') !== request.ranks.join(',')) {
      return this.fail(waiter, {
        kind: 'invalid',
        message: `${label}: rank ${rank} passed ranks [${request.ranks.join(', ')}], others passed [${c.ranks.join(', ')}]`,
      });
    }
    c.arrived.set(rank, { waiter, value: request.value });
    const deadMissing = c.ranks.filter((r) => !c.arrived.has(r) && (this.dead.has(r) || this.departed.has(r)));
    if (deadMissing.length > 0) return this.failCollective(request.key, this.deadError(label, deadMissing));
    if (c.arrived.size === c.ranks.length) this.complete(request.key, c);
  }

  private complete(key: string, c: Collective): void {
    clearTimeout(c.timer);
    this.collectives.delete(key);
    for (const [rank, { waiter }] of c.arrived) {
      if (c.kind === 'barrier') this.reply(waiter);
      else if (c.kind === 'gather') this.reply(waiter, c.ranks.map((r) => c.arrived.get(r)!.value));
      else this.reply(waiter, c.ranks.map((r) => (c.arrived.get(r)!.value as unknown[])[rank] ?? null));
    }
  }

  private timeOut(key: string, timeoutMs: number): void {
    const c = this.collectives.get(key);
    if (!c) return;
    const missing = c.ranks.filter((r) => !c.arrived.has(r));
    const neverConnected = missing.filter((r) => !this.everConnected.has(r));
    const note = neverConnected.length > 0 ? ` (${describeRanks(neverConnected)} never connected to the store)` : '';
    this.failCollective(key, {
      kind: 'timeout',
      what: collectiveLabel(c.kind, c.name),
      message: `${collectiveLabel(c.kind, c.name)} timed out after ${formatSeconds(timeoutMs)}: ${describeRanks(missing)} never arrived${note}`,
      ranks: missing,
      timeoutMs,
    });
  }

  private failCollective(key: string, error: WireError): void {
    const c = this.collectives.get(key);
    if (!c) return;
    clearTimeout(c.timer);
    this.collectives.delete(key);
    this.failed.set(key, error);
    for (const { waiter } of c.arrived.values()) this.fail(waiter, error);
  }

  private markDead(rank: number, reason: string): void {
    this.dead.set(rank, reason);
    for (const socket of this.sockets.values()) socket.write(encodeLine({ event: 'dead', rank, reason }));
    // Every collective the rank is part of fails now, also one it had arrived at: its peers would
    // otherwise pass it, or wait out their limit for a rank that left because of this death, and
    // then name that rank instead of the dead one.
    for (const [key, c] of [...this.collectives]) {
      if (c.ranks.includes(rank)) this.failCollective(key, this.deadError(collectiveLabel(c.kind, c.name), [rank], c.arrived.has(rank)));
    }
    for (const w of [...this.keyWaits]) {
      if (w.from === rank) {
        clearTimeout(w.timer);
        this.keyWaits.delete(w);
        this.fail(w.waiter, this.deadError(`wait for key '${w.key}'`, [rank]));
      }
    }
  }

  /** `arrived`: the dead ranks had arrived at the collective before they died. */
  private deadError(what: string, ranks: number[], arrived = false): WireError {
    const died = ranks.filter((r) => this.dead.has(r));
    const left = ranks.filter((r) => !this.dead.has(r));
    const when = arrived ? 'after arriving' : 'before arriving';
    const parts = [
      ...(died.length > 0 ? [`${describeRanks(died)} died ${when} (${[...new Set(died.map((r) => this.dead.get(r)))].join('; ')})`] : []),
      ...(left.length > 0 ? [`${describeRanks(left)} left the store without arriving`] : []),
    ];
    return { kind: 'dead', what, ranks, message: `${what}: ${parts.join('; ')}` };
  }

  private checkAllDeparted(): void {
    if (this.sockets.size === 0 && this.everConnected.size > 0) this.resolveAllDeparted();
  }

  private reply(waiter: Waiter, value?: unknown): void {
    if (!waiter.socket.destroyed) waiter.socket.write(encodeLine({ id: waiter.id, ok: true, value }));
  }

  private fail(waiter: Waiter, error: WireError): void {
    if (!waiter.socket.destroyed) waiter.socket.write(encodeLine({ id: waiter.id, ok: false, error }));
  }
}
