// Host-memory benchmark of the transfer engine: a 64 MiB WRITE from rank 0 to rank 1 with `shm`
// (default threads, and one thread = a plain memcpy per request) and with `ucx`, against a single
// memcpy of the same size between two local buffers measured in the same run, interleaved.
// Goal: shm WRITE >= 90% of the single memcpy. Prints a table and appends one JSON line
// to bench/results/engine-host.jsonl.
// Command line: USAGE below (--help prints it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { maxOf } from './lib/stats.ts';
import { monoNs } from '../runners/xfer/clock.ts';
import { benchArgs, smoke } from './lib/smoke.ts';
import {
  allocateHost,
  libc,
  openStore,
  rankFromEnv,
  ucp,
  XferEngine,
  type BackendOptions,
  type BackendName,
  type Store,
} from '../runners/xfer/index.ts';
import { benchOptions } from './lib/options.ts';
import { runAsLocalRanks } from './lib/local-ranks.ts';

const USAGE = `usage: node --import tsx bench/engine-host.ts [--mib 64] [--iters 20] [--ucx-tls tcp] [--smoke]
  --mib MiB per WRITE, median of --iters iterations; --ucx-tls: UCX_TLS of the ucx rows (default: the
  environment's, or UCX's choice). --smoke: 1 MiB, 2 iterations, no figure kept.`;

const here = fileURLToPath(import.meta.url);
const cli = benchOptions({ args: benchArgs(['--mib', '1', '--iters', '2']),
  options: { mib: { type: 'string', default: '64' }, iters: { type: 'string', default: '20' }, 'ucx-tls': { type: 'string' } },
}, USAGE);
const { values } = cli;
const mib = cli.wholeNumber('mib');
const bytes = mib * 1024 * 1024;
const tls = values['ucx-tls'] ?? process.env.UCX_TLS ?? 'TLS: UCX picks';
const iterations = cli.wholeNumber('iters');

interface Row {
  name: string;
  /** GB/s (1e9 bytes per second) of each timed iteration. */
  gbps: number[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gbps = (ns: number) => bytes / ns;

async function rankMain(): Promise<void> {
  const info = rankFromEnv();
  const store = await openStore(info);
  const baseline: Row = { name: 'memcpy (one call, same process)', gbps: [] };
  const rows: Row[] = [];
  const src = info.rank === 0 ? allocateHost('bench-src', bytes, info) : undefined;
  const dst = info.rank === 0 ? allocateHost('bench-dst', bytes, info) : undefined;
  const memcpyOnce = () => {
    const t0 = monoNs();
    libc().memcpy(dst!.address, src!.address, bytes);
    baseline.gbps.push(gbps(monoNs() - t0));
  };
  const runs: { name: string; backend: BackendName; options: BackendOptions; iters: number }[] = [
    { name: 'shm WRITE (default threads)', backend: 'shm', options: {}, iters: iterations },
    { name: 'shm WRITE (1 thread: plain memcpy)', backend: 'shm', options: { shm: { threads: 1 } }, iters: iterations },
    ...(['peer', 'none'] as const).map((errorHandling) => ({
      name: `ucx WRITE (${tls}, error handling ${errorHandling})`,
      backend: 'ucx' as const,
      options: { ucx: { tls: values['ucx-tls'], errorHandling } },
      iters: Math.max(3, iterations >> 2),
    })),
  ];
  for (const run of runs) rows.push(await measure(info.rank, store, run, memcpyOnce));
  if (info.rank === 0) report([baseline, ...rows]);
  src?.close();
  dst?.close();
  await store.close();
}

/** Rank 0 writes `bytes` to rank 1, once per iteration, a memcpy baseline run just before each. */
async function measure(
  rank: number,
  store: Store,
  run: { name: string; backend: BackendName; options: BackendOptions; iters: number },
  memcpyOnce: () => void,
): Promise<Row> {
  const engine = await XferEngine.create({ backend: run.backend, rank: rankFromEnv(), store, ...run.options });
  engine.allocate('buf', bytes);
  await engine.connect();
  const plan = await engine.prepare(rank === 0 ? [{ op: 'WRITE', peer: 1, local: 'buf', localOffset: 0, remote: 'buf', remoteOffset: 0, length: bytes }] : []);
  const row: Row = { name: run.name, gbps: [] };
  for (let i = -1; i < run.iters; i++) {
    await store.barrier('bench-iter');
    if (rank !== 0) continue;
    memcpyOnce();
    const result = await engine.execute(plan);
    if (i >= 0) row.gbps.push(gbps(result.endNs - result.startNs)); // iteration -1 warms up
  }
  await engine.disconnect();
  await engine.destroy();
  return row;
}

function report(rows: Row[]): void {
  const base = median(rows[0].gbps);
  console.log(`\n${mib} MiB host-memory transfers, 2 ranks, ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? '?'})`);
  console.log(`${'transfer'.padEnd(48)} ${'median GB/s'.padStart(12)} ${'best GB/s'.padStart(10)} ${'vs memcpy'.padStart(10)}`);
  for (const r of rows) {
    const m = median(r.gbps);
    console.log(`${r.name.padEnd(48)} ${m.toFixed(2).padStart(12)} ${maxOf(r.gbps).toFixed(2).padStart(10)} ${`${((m / base) * 100).toFixed(0)}%`.padStart(10)}`);
  }
  const shm = median(rows[1].gbps);
  const verdict = shm >= 0.9 * base ? 'PASS' : 'FAIL';
  console.log(`goal: shm WRITE >= 90% of one memcpy: ${((shm / base) * 100).toFixed(0)}% ${verdict}`);
  const line = {
    date: new Date().toISOString(),
    host: os.hostname(),
    cpus: os.availableParallelism(),
    node: process.version,
    ucx: ucp().versionString(),
    bytes,
    iterations,
    medianGBps: Object.fromEntries(rows.map((r) => [r.name, Number(median(r.gbps).toFixed(3))])),
    shmVsMemcpy: Number((shm / base).toFixed(3)),
    goal: 0.9,
    verdict,
  };
  if (smoke) {
    console.log('smoke: bench/engine-host runs (--smoke: tiny sizes, no figure kept)');
    return;
  }
  const out = path.join(path.dirname(here), 'results', 'engine-host.jsonl');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.appendFileSync(out, JSON.stringify(line) + '\n');
  console.log(`appended to ${path.relative(process.cwd(), out)}`);
}

await runAsLocalRanks(here, 2, rankMain);
