// Rendezvous and preparation of the transfer engine : time from launch to the
// first transfer for 2, 4 and 8 ranks on this machine. The launcher (spawnLocalRanks) starts
// bench/fixtures/rendezvous-rank.ts once per rank; the launch time is taken here just before; each
// rank reports when it passed each step. Reported: the latest rank's time per step, and node's own
// start-up (plain, and with tsx) to tell the engine's share from the runtime's. The same ranks are
// also run as compiled JavaScript (the entry bundled by esbuild, as bench/gpu/bundle.sh
// does; plain node, no tsx). Goal: <= 0.5 s for 8 ranks. Last, the real command end to end:
// `node bin/disagg-bench.js ct-perftest --ranks N` (one 4 KiB transfer per pair, shm), spawn to
// exit, through the bin's CLI bundle and through tsx (DISAGG_BIN=tsx).
// Command line: USAGE below (--help prints it).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { monoNs, nodeEntryArgv, spawnLocalRanks } from '../runners/xfer/index.ts';
import { appendResult, benchDir, printGoals, printTable, type Goal } from './lib/report.ts';
import { packageRoot } from '../framework/settings.ts';
import { maxOf, median } from './lib/stats.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/rendezvous.ts [--ranks 2,4,8] [--rounds 3] [--smoke]
  Each world size of --ranks, --rounds times. --smoke: 2 ranks, one round, no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--ranks', '2', '--rounds', '1']),
  options: { ranks: { type: 'string', default: '2,4,8' }, rounds: { type: 'string', default: '3' } },
}, USAGE);
const worldSizes = cli.wholeNumbers('ranks', { min: 2 });
const rounds = cli.wholeNumber('rounds');
const rankEntry = path.join(benchDir, 'fixtures', 'rendezvous-rank.ts');
const emptyEntry = path.join(benchDir, 'fixtures', 'empty.ts');

const STEPS = [
  ['originNs', 'node process started'],
  ['entryNs', 'entry file running'],
  ['importedNs', 'engine imported'],
  ['storeNs', 'store connected'],
  ['clockNs', 'clock synced'],
  ['allocNs', 'shm region allocated'],
  ['connectNs', 'peers connected'],
  ['transferNs', 'first transfer done'],
] as const;
type Step = (typeof STEPS)[number][0];
type RankTimes = Record<Step, number> & { rank: number; cpuMs: number };

/** Per step, the latest rank's time since launch (ms); and the most CPU time one rank used. */
type Launch = Record<Step, number> & { cpuMsMax: number };

/**
 * The rank entry bundled to one JavaScript file (koffi left out: it is native). Written under
 * node_modules/.cache so that `koffi` resolves from there.
 */
async function compiledEntry(): Promise<string> {
  const out = path.join(packageRoot, 'node_modules', '.cache', 'disagg-bench', 'rendezvous-rank.mjs');
  mkdirSync(path.dirname(out), { recursive: true });
  await execa('npx', ['--no-install', 'esbuild', rankEntry, '--bundle', '--platform=node', '--format=esm', '--target=node20',
    '--external:koffi', `--outfile=${out}`, '--log-level=warning'], { cwd: packageRoot });
  return out;
}

async function launchOnce(worldSize: number, entry: string): Promise<Launch> {
  const reports: RankTimes[] = [];
  const launchNs = monoNs();
  const result = await spawnLocalRanks(worldSize, nodeEntryArgv(entry), {
    onLine: (rank, stream, line) => {
      if (line.startsWith('RENDEZVOUS ')) reports.push(JSON.parse(line.slice('RENDEZVOUS '.length)) as RankTimes);
      else (stream === 'stdout' ? process.stdout : process.stderr).write(`[rank ${rank}] ${line}\n`);
    },
  });
  if (!result.ok || reports.length !== worldSize) {
    throw new Error(`${worldSize} ranks: ${reports.length} reported; exits ${JSON.stringify(result.exits)}`);
  }
  const steps = Object.fromEntries(STEPS.map(([step]) => [step, maxOf(reports.map((r) => r[step] - launchNs)) / 1e6]));
  return { ...steps, cpuMsMax: maxOf(reports.map((r) => r.cpuMs)) } as Launch;
}

/** `count` processes of `node argv` at once: ms from just before the spawns to the last exit. */
async function startAndExit(argv: string[], count: number): Promise<number> {
  const t0 = monoNs();
  await Promise.all(
    Array.from({ length: count }, () => new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, argv, { stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`node ${argv.join(' ')} exited ${code}`))));
    })),
  );
  return (monoNs() - t0) / 1e6;
}

/** `disagg-bench ct-perftest --ranks n` (all-to-all 4 KiB, one iteration, shm): ms from spawn to exit. */
async function ctPerftestOnce(n: number, bin: 'bundle' | 'tsx'): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rendezvous-ct-'));
  writeFileSync(path.join(dir, 'm.txt'), Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? '0' : '4K')).join(' ')).join('\n') + '\n');
  writeFileSync(path.join(dir, 'c.yaml'), 'iters: 1\nwarmup_iters: 0\ntraffic_pattern:\n  matrix_file: m.txt\n  mem_type: cpu\n');
  const t0 = monoNs();
  await execa(process.execPath, [path.join(packageRoot, 'bin', 'disagg-bench.js'), 'ct-perftest', path.join(dir, 'c.yaml'), '--ranks', String(n), '--backend', 'shm'],
    { env: bin === 'tsx' ? { DISAGG_BIN: 'tsx' } : {}, stdout: 'ignore' });
  return (monoNs() - t0) / 1e6;
}

const ms = (x: number) => x.toFixed(0);

/** Every world size `rounds` times; per size, all rounds and the round with the median first transfer. */
async function measure(entry: string, title: string) {
  const launches = new Map<number, Launch[]>();
  for (let round = 0; round < rounds; round++) {
    for (const n of worldSizes) launches.set(n, [...(launches.get(n) ?? []), await launchOnce(n, entry)]);
  }
  const typical = new Map([...launches].map(([n, all]) => {
    const m = median(all.map((l) => l.transferNs));
    return [n, all.find((l) => l.transferNs === m)!];
  }));
  printTable(
    `${title}: the latest rank per step, ms since launch (median of ${rounds} rounds)`,
    ['step', ...worldSizes.map((n) => `${n} ranks`)],
    [
      ...STEPS.map(([step, label]) => [label, ...worldSizes.map((n) => ms(typical.get(n)![step]))]),
      ['CPU time of one rank (most)', ...worldSizes.map((n) => ms(typical.get(n)!.cpuMsMax))],
    ],
  );
  return { launches, typical };
}

async function main(): Promise<void> {
  const { launches, typical } = await measure(rankEntry, 'Launch to first transfer, shm, ranks on one machine, TypeScript through tsx');
  const compiled = await measure(await compiledEntry(), 'The same, ranks as compiled JavaScript (esbuild bundle, plain node)');
  const startup: Array<[string, number[], number]> = [];
  for (const [label, argv] of [['node -e 0', ['-e', '0']], ['node --import tsx (empty .ts)', nodeEntryArgv(emptyEntry)]] as const) {
    for (const count of [1, maxOf(worldSizes)]) {
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) times.push(await startAndExit([...argv], count));
      startup.push([label, times, count]);
    }
  }
  printTable(`Runtime start-up alone: spawn to exit, ms (median of ${rounds})`, ['command', 'processes at once', 'ms'],
    startup.map(([label, times, count]) => [label, count, ms(median(times))]));
  await ctPerftestOnce(2, 'bundle'); // builds the CLI bundle if the sources changed
  const realPath: Array<{ bin: 'bundle' | 'tsx'; ranks: number; msAllRounds: number[] }> = [];
  for (const bin of ['bundle', 'tsx'] as const) {
    for (const n of worldSizes) {
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) times.push(await ctPerftestOnce(n, bin));
      realPath.push({ bin, ranks: n, msAllRounds: times });
    }
  }
  printTable(`node bin/disagg-bench.js ct-perftest --ranks N (shm, one 4 KiB all-to-all): spawn to exit, ms (median of ${rounds})`,
    ['bin', ...worldSizes.map((n) => `${n} ranks`)],
    (['bundle', 'tsx'] as const).map((bin) => [bin, ...worldSizes.map((n) => ms(median(realPath.find((r) => r.bin === bin && r.ranks === n)!.msAllRounds)))]));
  const largest = maxOf(worldSizes);
  const headline = typical.get(largest)!;
  const tsxShare = headline.entryNs / headline.transferNs;
  const compiledHeadline = compiled.typical.get(largest)!;
  console.log(`\n${largest} ranks: ${ms(headline.transferNs)} ms to the first transfer, ${ms(headline.entryNs)} ms of it (${(tsxShare * 100).toFixed(0)}%) ` +
    `before the entry file runs (node + tsx start-up), ${ms(headline.importedNs - headline.entryNs)} ms more to import the engine, ` +
    `${ms(headline.transferNs - headline.importedNs)} ms from there to the transfer (store, clock, region, connect, transfer); ` +
    `compiled: ${ms(compiledHeadline.transferNs)} ms`);
  const goals: Goal[] = [
    { what: `launch to first transfer, ${largest} ranks (tsx)`, value: Number((headline.transferNs / 1000).toFixed(3)), limit: 0.5, atMost: true, unit: ' s' },
    { what: `launch to first transfer, ${largest} ranks (compiled)`, value: Number((compiledHeadline.transferNs / 1000).toFixed(3)), limit: 0.5, atMost: true, unit: ' s' },
    { what: `ct-perftest --ranks ${largest} through the bin's bundle, spawn to exit`, value: Number((median(realPath.find((r) => r.bin === 'bundle' && r.ranks === largest)!.msAllRounds) / 1000).toFixed(3)), limit: 0.5, atMost: true, unit: ' s' },
  ];
  printGoals(goals);
  appendResult('rendezvous', {
    backend: 'shm', rounds,
    launchToStepMs: Object.fromEntries([...typical].map(([n, l]) => [`${n}`, l])),
    firstTransferMsAllRounds: Object.fromEntries([...launches].map(([n, all]) => [`${n}`, all.map((l) => l.transferNs)])),
    compiled: {
      launchToStepMs: Object.fromEntries([...compiled.typical].map(([n, l]) => [`${n}`, l])),
      firstTransferMsAllRounds: Object.fromEntries([...compiled.launches].map(([n, all]) => [`${n}`, all.map((l) => l.transferNs)])),
    },
    startupMs: startup.map(([label, times, count]) => ({ command: label, processes: count, medianMs: median(times) })),
    beforeEntryShare: tsxShare,
    engineAfterImportMs: headline.transferNs - headline.importedNs,
    ctPerftestSpawnToExitMs: realPath.map((r) => ({ ...r, medianMs: median(r.msAllRounds) })),
  }, goals);
}

await main();
