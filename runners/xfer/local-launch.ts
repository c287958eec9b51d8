// `--ranks N` on one machine: start N rank processes of an entry script with torchrun's variables,
// prefix their output with "[rank k]", and fail fast: when one rank fails, stop the others.
import { JOB_SECRET_VARIABLE, jobSecretOf, newJobSecret } from '../common/job-secret.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { totalmem } from 'node:os';
import { PEER_DIED_EXIT_CODE, XferError } from './errors.ts';
import { removeSegments } from './shm-segments.ts';

export interface LocalLaunchOptions {
  /** Extra environment for every rank (on top of process.env). */
  env?: Record<string, string | undefined>;
  /** Extra environment for one rank (e.g. XFER_NODE to place ranks on pretend nodes). */
  rankEnv?: (rank: number) => Record<string, string | undefined>;
  /** Where rank output goes (default: this process's stdout/stderr). */
  onLine?: (rank: number, stream: 'stdout' | 'stderr', line: string) => void;
  /** Start only these ranks of the world (tests use it to leave a rank out). Default: all. */
  only?: number[];
  /**
   * After the first failure, how long the others get to fail on their own (they see the dead rank
   * through the store and say so) before they are sent SIGTERM. Default 3 s.
   */
  stopAfterMs?: number;
  /** Then how long SIGTERM gets before SIGKILL. Default 5 s. */
  killGraceMs?: number;
  cwd?: string;
  /**
   * These ranks are one node of a larger world (the EP tests' --num-processes per node): local
   * ranks count from `firstRank`, and the world's store is at `host` (port, or derived from `job`).
   */
  node?: NodeOfWorld;
}

export interface NodeOfWorld {
  firstRank: number;
  ranksPerNode: number;
  host: string;
  port?: number;
  job: string;
}

export interface RankExit {
  rank: number;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LocalLaunchResult {
  ok: boolean;
  exits: RankExit[];
  /**
   * The rank that failed on its own (not stopped by us, not stopped because another rank died):
   * the first such exit seen, else the first failure of any kind.
   */
  firstFailure?: RankExit;
}

/** Node arguments that run an entry script: TypeScript through tsx (`--import tsx`), JavaScript as is. */
export function nodeEntryArgv(entry: string, args: string[] = []): string[] {
  return /\.[cm]?ts$/.test(entry) ? ['--import', 'tsx', entry, ...args] : [entry, ...args];
}

/**
 * The environment that makes a process rank `rank` of a local world (what spawnLocalRanks sets).
 * No MASTER_PORT (one inherited from the caller's environment is removed): every rank derives the
 * same candidate ports from XFER_JOB_ID (rank.ts), rank 0 listens on the first one free and the
 * others find it by the job id. A port probed here and bound later by rank 0 could be taken in
 * between, by an outgoing connection given it as its ephemeral port, and would leave rank 0
 * nowhere to go (a loaded test run saw it: "store: cannot listen on any of ports 40661").
 */
export function localRankEnv(rank: number, worldSize: number, job: string): Record<string, string | undefined> {
  return {
    RANK: String(rank),
    WORLD_SIZE: String(worldSize),
    LOCAL_RANK: String(rank),
    LOCAL_WORLD_SIZE: String(worldSize),
    MASTER_ADDR: '127.0.0.1',
    MASTER_PORT: undefined,
    XFER_JOB_ID: job,
    // Its ranks read torchrun's variables, whatever launcher started this process.
    XFER_RANK_VARIABLES: 'torchrun',
    // The job's secret, or one for this launch: the store admits these ranks only.
    [JOB_SECRET_VARIABLE]: jobSecretOf() ?? launchSecret(),
  };
}

let ownSecret: string | undefined;
/** One secret for the ranks this process starts, when it was given none. */
function launchSecret(): string {
  ownSecret ??= newJobSecret();
  return ownSecret;
}

/** A job id unique to this launch: the store's candidate ports derive from it. */
export function localStoreJob(): string {
  return `local:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** Memory a rank process takes at least (Node, the engine, its buffers aside). */
const RANK_PROCESS_BYTES = 64 * 1024 * 1024;
const MOST_LOCAL_RANKS = 512;

/**
 * How many ranks may start on this machine: what its memory holds at RANK_PROCESS_BYTES each, at
 * most 512, or XFER_MAX_LOCAL_RANKS. A mistyped `--ranks 1000` is refused, not a fork bomb.
 */
export function maxLocalRanks(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.XFER_MAX_LOCAL_RANKS);
  if (Number.isInteger(set) && set > 0) return set;
  return Math.max(1, Math.min(MOST_LOCAL_RANKS, Math.floor(totalmem() / RANK_PROCESS_BYTES)));
}

/** Throws when `worldSize` ranks cannot start here, saying why (before any process starts). */
export function checkLocalWorld(worldSize: number): void {
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new XferError(`a world of ${worldSize} ranks: expected a whole number of ranks >= 1`);
  const most = maxLocalRanks();
  if (worldSize > most) {
    throw new XferError(
      `${worldSize} ranks cannot start on this machine: at most ${most} (one process each, ${RANK_PROCESS_BYTES / 2 ** 20} MiB or more, ` +
        `${(totalmem() / 2 ** 30).toFixed(0)} GiB of memory here); start ranks across nodes with srun or mpirun, or set XFER_MAX_LOCAL_RANKS`,
    );
  }
}

/** The environment of rank `rank` of a multi-node world, started on its node (spawnLocalRanks' `node`). */
export function nodeRankEnv(rank: number, worldSize: number, node: NodeOfWorld): Record<string, string | undefined> {
  return {
    RANK: String(rank),
    WORLD_SIZE: String(worldSize),
    LOCAL_RANK: String(rank - node.firstRank),
    LOCAL_WORLD_SIZE: String(node.ranksPerNode),
    MASTER_ADDR: node.host,
    MASTER_PORT: node.port === undefined ? undefined : String(node.port),
    XFER_JOB_ID: node.job,
    XFER_RANK_VARIABLES: 'torchrun',
  };
}

/** Starts `worldSize` ranks of `node <argv>` (or, with `node`, that node's ranks) and resolves when all have exited. */
export async function spawnLocalRanks(worldSize: number, argv: string[], options: LocalLaunchOptions = {}): Promise<LocalLaunchResult> {
  const node = options.node;
  // Only this node's ranks start here: that is what must fit this machine.
  checkLocalWorld(node ? node.ranksPerNode : worldSize);
  const job = localStoreJob();
  const ranks = options.only ?? (node ? Array.from({ length: node.ranksPerNode }, (_, i) => node.firstRank + i) : Array.from({ length: worldSize }, (_, i) => i));
  const print = options.onLine ?? ((rank, stream, line) => (stream === 'stdout' ? process.stdout : process.stderr).write(`[rank ${rank}] ${line}\n`));
  const children = new Map<number, ChildProcess>();
  const stoppedByUs = new Set<number>();
  let firstFailure: RankExit | undefined;
  let firstOwnFailure: RankExit | undefined;

  const exits = await Promise.all(
    ranks.map(
      (rank) =>
        new Promise<RankExit>((resolve) => {
          const child = spawn(process.execPath, argv, {
            cwd: options.cwd,
            env: { ...process.env, ...options.env, ...options.rankEnv?.(rank), ...(node ? nodeRankEnv(rank, worldSize, node) : localRankEnv(rank, worldSize, job)) },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          children.set(rank, child);
          forwardLines(child.stdout!, (line) => print(rank, 'stdout', line));
          forwardLines(child.stderr!, (line) => print(rank, 'stderr', line));
          child.on('error', (err) => print(rank, 'stderr', `cannot start: ${err.message}`));
          child.on('close', (code, signal) => {
            children.delete(rank);
            // A rank that died without its exit hooks (SIGKILL, an abort) left its shared-memory
            // segments; they would hold the node's memory until some later benchmark swept them.
            if (child.pid !== undefined) removeSegments((pid) => pid === child.pid);
            const exit = { rank, code, signal };
            if ((code !== 0 || signal !== null) && !stoppedByUs.has(rank)) {
              if (!firstFailure) setTimeout(() => stopAll(children, stoppedByUs, options.killGraceMs ?? 5_000), options.stopAfterMs ?? 3_000).unref();
              firstFailure ??= exit;
              // A rank that saw another die may be reaped before the one that died (both gone by then).
              if (code !== PEER_DIED_EXIT_CODE) firstOwnFailure ??= exit;
            }
            resolve(exit);
          });
        }),
    ),
  );
  return { ok: exits.every((e) => e.code === 0), exits: exits.sort((a, b) => a.rank - b.rank), firstFailure: firstOwnFailure ?? firstFailure };
}

function stopAll(children: Map<number, ChildProcess>, stoppedByUs: Set<number>, graceMs: number): void {
  for (const [rank, child] of children) {
    stoppedByUs.add(rank);
    child.kill('SIGTERM');
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, graceMs).unref();
  }
}

function forwardLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  stream.on('end', () => {
    if (pending.length > 0) onLine(pending);
  });
}
