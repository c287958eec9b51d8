// Self-test of the engine, run as one process per rank: a random all-to-all matrix of sizes, moved
// with READ and/or WRITE and verified byte for byte every iteration. Rank 0 prints one line per op.
// Fault injection (--die-rank/--die-at, --flip-byte-rank) lets tests check the failure paths;
// --announce-transfers tells a test when the transfers run (to kill a rank then).
//   node --import tsx runners/xfer/selftest.ts --backend shm --ops WRITE,READ --iters 2
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { openStore } from './store.ts';
import { rankFromEnv } from './rank.ts';
import { XferEngine } from './engine.ts';
import { VerificationError } from './errors.ts';
import { checkPattern, describeMismatch, fillPattern, poisonPattern } from './pattern.ts';
import { seededRandom } from '../common/random.ts';
import { matrixRequests, sliceOffsets } from './matrix-requests.ts';
import { maxOf, minOf } from '../common/stats.ts';
import { backendNames, type BackendName, type XferOp } from './backends/types.ts';
import type { MemoryKind } from './memory.ts';
import { parseCudaCopyPath, type CudaCopyPath } from './device-copy/copy-path.ts';
import { UsageError } from '../common/errors.ts';
import { EXIT_OK, exitCodeOfError } from '../common/exit-codes.ts';

export interface SelftestOptions {
  backend: BackendName;
  ops: XferOp[];
  iterations: number;
  seed: number;
  maxBytes: number;
  shards: number;
  memory?: MemoryKind;
  ucxTls?: string;
  /** libfabric provider (tcp, shm, ...); default FI_PROVIDER's choice. */
  fiProvider?: string;
  /** backend cuda: copy engines, the copy kernel, or per plan. */
  cudaCopy?: CudaCopyPath;
  dieRank?: number;
  dieAt?: 'connect' | 'transfer';
  flipByteRank?: number;
  /** Print `rank N: transferring` once the first iteration is done (--announce-transfers). */
  announceTransfers?: boolean;
}

/** matrix[i][j] = bytes rank i sends to rank j: about a quarter zeros, odd sizes, the diagonal too. */
export function randomMatrix(ranks: number, seed: number, maxBytes: number): number[][] {
  const next = seededRandom(seed);
  return Array.from({ length: ranks }, () => Array.from({ length: ranks }, () => (next() < 0.25 ? 0 : 1 + Math.floor(next() * maxBytes))));
}

export async function runSelftest(o: SelftestOptions): Promise<void> {
  const info = rankFromEnv();
  const me = info.rank;
  const store = await openStore(info);
  let engine: XferEngine | undefined;
  try {
    engine = await XferEngine.create({
      backend: o.backend,
      rank: info,
      store,
      ucx: o.ucxTls ? { tls: o.ucxTls } : undefined,
      libfabric: o.fiProvider ? { provider: o.fiProvider } : undefined,
      cuda: o.cudaCopy ? { copy: o.cudaCopy } : undefined,
    });
    const matrix = randomMatrix(info.worldSize, o.seed, o.maxBytes);
    const { row, col } = sliceOffsets(matrix);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const send = engine.allocate('send', sum(matrix[me]), o.memory);
    const recv = engine.allocate('recv', sum(matrix.map((r) => r[me])), o.memory);
    if (o.dieRank === me && o.dieAt === 'connect') process.exit(3);
    await engine.connect();
    for (const [opIndex, op] of o.ops.entries()) {
      const plan = await engine.prepare(matrixRequests(matrix, me, op, o.shards));
      let worstNs = 0;
      for (let it = 0; it < o.iterations; it++) {
        const iteration = opIndex * o.iterations + it;
        matrix[me].forEach((n, j) => fillPattern(send, row[me][j], n, { sender: me, receiver: j, iteration }));
        matrix.forEach((r, i) => poisonPattern(recv, col[me][i], r[me], { sender: i, receiver: me, iteration }));
        await store.barrier(`selftest-ready`);
        if (o.dieRank === me && o.dieAt === 'transfer') process.exit(3);
        const result = await engine.execute(plan);
        await store.barrier(`selftest-done`);
        // A test that kills a rank mid-run waits for this line instead of guessing when the loop runs.
        if (o.announceTransfers && it === 0 && opIndex === 0) console.log(`rank ${me}: transferring`);
        if (o.flipByteRank === me && recv.size > 0) recv.write(recv.size >> 1, Uint8Array.of(recv.read(recv.size >> 1, 1)[0] ^ 0x01));
        matrix.forEach((r, i) => {
          const stream = { sender: i, receiver: me, iteration };
          const m = checkPattern(recv, col[me][i], r[me], stream);
          if (m) throw new VerificationError(`rank ${me}: ${op} verification failed: ${describeMismatch('recv', stream, m)}`, m.offset, m.expected, m.got);
        });
        const spans = await store.allGather(`selftest-span`, [store.toRank0Ns(result.startNs), store.toRank0Ns(result.endNs)]);
        worstNs = Math.max(worstNs, maxOf(spans.map((s) => s[1])) - minOf(spans.map((s) => s[0])));
      }
      if (me === 0) {
        const total = sum(matrix.map(sum));
        console.log(
          `selftest ok: backend=${o.backend}${o.cudaCopy ? ` cuda-copy=${o.cudaCopy}` : ''} op=${op} ranks=${info.worldSize} iterations=${o.iterations} shards=${o.shards} ` +
            `bytes=${total} verified, slowest iteration ${(worstNs / 1e6).toFixed(3)} ms`,
        );
      }
    }
    await engine.disconnect();
  } catch (err) {
    // Rank 0 keeps the store up until the others have left, so each learns which rank failed.
    await engine?.destroy().catch(() => {});
    await store.closeAfterFailure();
    throw err;
  }
  await engine.destroy();
  await store.close();
}

function parseSelftestArgs(argv: string[]): SelftestOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      backend: { type: 'string', default: 'shm' },
      ops: { type: 'string', default: 'WRITE,READ' },
      iters: { type: 'string', default: '2' },
      seed: { type: 'string', default: '1' },
      'max-bytes': { type: 'string', default: '300000' },
      shards: { type: 'string', default: '1' },
      memory: { type: 'string' },
      'ucx-tls': { type: 'string' },
      'fi-provider': { type: 'string' },
      'cuda-copy': { type: 'string' },
      'die-rank': { type: 'string' },
      'die-at': { type: 'string', default: 'transfer' },
      'flip-byte-rank': { type: 'string' },
      'announce-transfers': { type: 'boolean', default: false },
    },
  });
  const backend = values.backend as BackendName;
  if (!backendNames.includes(backend)) throw new UsageError(`--backend must be one of ${backendNames.join(', ')}`);
  const ops = values.ops.split(',').map((s) => s.trim().toUpperCase()) as XferOp[];
  if (ops.some((op) => op !== 'READ' && op !== 'WRITE')) throw new UsageError('--ops takes READ and/or WRITE');
  const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
  return {
    backend,
    ops,
    iterations: Number(values.iters),
    seed: Number(values.seed),
    maxBytes: Number(values['max-bytes']),
    shards: Math.max(1, Number(values.shards)),
    memory: values.memory as MemoryKind | undefined,
    ucxTls: values['ucx-tls'],
    fiProvider: values['fi-provider'],
    cudaCopy: values['cuda-copy'] === undefined ? undefined : parseCudaCopyPath(values['cuda-copy'], '--cuda-copy'),
    dieRank: num(values['die-rank']),
    dieAt: values['die-at'] as 'connect' | 'transfer',
    flipByteRank: num(values['flip-byte-rank']),
    announceTransfers: values['announce-transfers'],
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runSelftest(parseSelftestArgs(process.argv.slice(2))).then(
    () => process.exit(EXIT_OK),
    (err: Error) => {
      console.error(`rank ${process.env.RANK ?? process.env.SLURM_PROCID ?? '?'}: ${err.name}: ${err.message}`);
      process.exit(exitCodeOfError(err)); // the launchers' protocol: 75 names a rank that lost a peer
    },
  );
}
