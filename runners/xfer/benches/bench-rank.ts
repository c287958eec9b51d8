// What the CT perftests share: the command around the ranks (ranks themselves come from
// common/rank-launch.ts), the backend choice, the store and the engine opened and always torn
// down around a rank's work, errors that say which rank failed, the JSON report.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { openStore, type Store, type StoreOptions } from '../store.ts';
import { XferEngine } from '../engine.ts';
import { XferError } from '../errors.ts';
import { rankFromEnv, type RankInfo } from '../rank.ts';
import type { MemoryKind } from '../memory.ts';
import type { BackendName } from '../backends/types.ts';
import { refuseOtherNodes } from '../backends/guards.ts';
import type { BackendOptions } from '../backends/registry.ts';
import { runAsRanks, takeRanksOption } from './common/rank-launch.ts';
import { takeUcxFlags } from './common/ucx-flags.ts';

/** Without --backend: cuda for GPU memory, shm for host memory (same node; use ucx across nodes). */
export function defaultBackend(kinds: readonly MemoryKind[]): BackendName {
  if (kinds.length === 1) return kinds[0] === 'gpu' ? 'cuda' : 'shm';
  throw new XferError('the patterns use both GPU and host memory: say which backend moves them with --backend (ucx, if it has a CUDA transport)');
}

/**
 * Runs `body` as this rank: opens the store and the engine, and always tears them down. On failure
 * the rank leaves soon (rank 0 keeps the store up a little so the others learn who failed) and the
 * error names the rank.
 */
export async function runAsRank<T>(
  info: RankInfo,
  backend: BackendName,
  kinds: readonly MemoryKind[],
  body: (engine: XferEngine, store: Store) => Promise<T>,
  backendOptions: BackendOptions = {},
  storeOptions: StoreOptions = {},
): Promise<T> {
  const store = await openStore(info, storeOptions);
  let engine: XferEngine | undefined;
  try {
    engine = await XferEngine.create({ ...backendOptions, backend, rank: info, store });
    await refuseOtherNodes(engine.backend, info, store);
    const missing = kinds.filter((k) => !engine!.backend.memoryKinds.includes(k));
    if (missing.length > 0) {
      throw new XferError(
        `backend ${backend} moves ${engine.backend.memoryKinds.join(' and ')} memory, the patterns need ${missing.join(' and ')} memory ` +
          `(mem_type cuda|vram is GPU memory, cpu|dram host memory)`,
      );
    }
    const result = await body(engine, store);
    await engine.destroy();
    await store.close();
    return result;
  } catch (err) {
    await engine?.destroy().catch(() => {});
    await store.closeAfterFailure();
    const e = err as Error;
    if (!e.message.startsWith(`rank ${info.rank}:`)) e.message = `rank ${info.rank}: ${e.message}`;
    throw e;
  }
}

/** Rank 0 says what reading the config found (a matrix_file's base, truncated cells): `note: ` lines on stderr. */
export function printNotes(info: RankInfo, notes: readonly string[]): void {
  if (info.rank === 0) for (const note of notes) process.stderr.write(`note: ${note}\n`);
}

/**
 * Rank 0 writes the JSON report where --json-output-path says: a temporary file renamed over it,
 * so a reader (or a crash, or a full disk) never leaves a half-written report.
 */
export function writeJsonReport(file: string | undefined, report: unknown): void {
  if (!file) return;
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(report, null, 2)}\n`);
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw new XferError(`cannot write the JSON report ${file}: ${(err as Error).message}`);
  }
}

/** A benchmark command whose rank 0 prints a report and writes it as JSON (--json-output-path). */
export interface ReportingBench<O extends { configFile: string; jsonOutputPath?: string }, R> {
  command: string;
  /** The options of one rank (--ranks is taken out before). */
  parse(argv: string[]): O;
  /** Reads the config for a world of `ranks` (throws when a matrix does not fit). */
  readConfig(file: string, ranks: number): unknown;
  /** One rank's part; rank 0 returns the report. */
  run(info: RankInfo, options: O): Promise<R | undefined>;
  format(report: R): string;
}

/**
 * `disagg-bench <command> CONFIG ...`: this process is one rank under a launcher, or starts
 * --ranks N here (common/rank-launch.ts). On its own, the config is checked against the ranks it
 * will start before any starts.
 */
export async function reportingBenchMain<O extends { configFile: string; jsonOutputPath?: string }, R>(
  argv: string[],
  bench: ReportingBench<O, R>,
): Promise<number> {
  const args = takeUcxFlags(argv);
  const { ranks, rest } = takeRanksOption(args);
  const options = bench.parse(rest);
  if (rankFromEnv().launcher === 'single') checkFits(ranks, (n) => bench.readConfig(options.configFile, n));
  return runAsRanks({ command: bench.command, argv: args, defaultRanks: 1 }, async () => {
    const report = await bench.run(rankFromEnv(), options);
    if (report) {
      process.stdout.write(bench.format(report));
      writeJsonReport(options.jsonOutputPath, report);
    }
    return 0;
  });
}

/** A world that is too small for the matrix (1 rank without --ranks) says how to start more. */
function checkFits(ranks: number | undefined, check: (ranks: number) => unknown): void {
  try {
    check(ranks ?? 1);
  } catch (err) {
    if (ranks === undefined && /but the run has 1 ranks/.test((err as Error).message)) {
      (err as Error).message += ' (start more with --ranks N, or launch one process per rank with srun, torchrun or mpirun)';
    }
    throw err;
  }
}
