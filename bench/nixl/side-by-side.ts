// The engine's `sweep` beside REAL nixlbench (built by scripts/build-nixl.sh), same machine, same
// run, same flags: for each UCX transport set, op (READ, WRITE) and batch size (1, 16), one engine
// sweep and one nixlbench run over block sizes 4 KiB..64 MiB, alternating which goes first
// (`--rounds N`: N of each, medians per block size). Each side runs through the framework: a
// `nixl` config (`kind: sweep` / `kind: nixlbench`, nixlbench's ASIO runtime by default) run as a
// job by the nixl type and read by its nixlbench extractor (bench/nixl/side-runs.ts). Both load
// the same UCX, the one nixlbench was built with, and both log UCX's lanes (UCX_LOG_LEVEL=info)
// and protocol choices (UCX_PROTO_INFO=y), so the logs say which transport and protocol carried
// each size on each side; the summary sets each side's Avg Post / Avg Tx at 4 KiB beside the
// latency ratio. Ratios: engine / nixlbench bandwidth per block size, engine / nixlbench Avg Lat.
// Goals (host memory): bandwidth >= 1.0x from 64 KiB up, latency <= 1.1x at 4 KiB.
// Command line: USAGE below (--help prints it). Logs: bench/results/nixl-side-by-side-<label>/ (label:
// the date), one folder per transport, op and batch, with both sides' job folders; figures appended
// to bench/results/nixl-side-by-side.jsonl.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendResult, machine, printGoals, printTable, resultsDir, type Goal } from '../lib/report.ts';
import { benchArgs, smoke } from '../lib/smoke.ts';
import { median } from '../lib/stats.ts';
import { minOf } from '../../runners/common/stats.ts';
import { makeSides, NO_ROW, type Flags, type Row, type SideRun } from './side-runs.ts';
import { benchOptions } from '../lib/options.ts';
import { UCX_CHOICE_ENV, ucxCompletions, ucxPosts } from '../../runners/xfer/backends/ucx-options.ts';

const USAGE = `usage: node --import tsx bench/nixl/side-by-side.ts [--transports shm,tcp] [--rounds 1]
    [--iters 200] [--warmup 20] [--batches 1,16] [--ops READ,WRITE] [--start 4096]
    [--max 67108864] [--runtime ASIO|ETCD] [--nixlbench PATH] [--engine-ucx-lib DIR|system]
    [--seg DRAM|VRAM] [--engine-backend ucx] [--nixl-backend UCX] [--engine CMD] [--label NAME] [--smoke]
    [--ucx-variants POST/COMPLETION,...]
  --transports: UCX_TLS of both sides, each as <name>,self (shm with UCX_MM_ERROR_HANDLING=y; tcp1m:
  tcp with 1 MiB tcp segments on both sides); default leaves UCX_TLS unset. --engine CMD runs the
  engine's sweep command directly instead of as a job (the GPU machine's bundle, bench/nixl/
  gpu-run.sh, where there is no checkout to run jobs from; there the transports default to
  default). --label names the log folder (default: the date). --smoke: tcp, WRITE, one batch of
  blocks up to 16 KiB, 8 iterations, no figure kept. --ucx-variants plain/each,nixl/flush: the
  engine once per variant in every round (XFER_UCX_POST / XFER_UCX_COMPLETION, runners/xfer/README.md),
  each set beside the same nixlbench runs; the order rotates from round to round.`;

const cli = benchOptions({
  args: benchArgs(['--max', '16384', '--iters', '8', '--warmup', '2', '--batches', '1', '--ops', 'WRITE', '--transports', 'tcp']),
  options: {
    smoke: { type: 'boolean' },
    nixlbench: { type: 'string' },
    'engine-backend': { type: 'string', default: 'ucx' },
    'nixl-backend': { type: 'string', default: 'UCX' },
    'engine-ucx-lib': { type: 'string' },
    runtime: { type: 'string', default: 'ASIO' },
    transports: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    seg: { type: 'string', default: 'DRAM' },
    iters: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    batches: { type: 'string', default: '1,16' },
    ops: { type: 'string', default: 'READ,WRITE' },
    start: { type: 'string', default: '4096' },
    max: { type: 'string', default: '67108864' },
    engine: { type: 'string' },
    label: { type: 'string' },
    'ucx-variants': { type: 'string' },
  },
}, USAGE);
const { values } = cli;
const runtime = cli.oneOf('runtime', ['ASIO', 'ETCD']);
const seg = cli.oneOf('seg', ['DRAM', 'VRAM']);
const ops = cli.someOf('ops', ['READ', 'WRITE']);
const batches = cli.wholeNumbers('batches');
const [start, max, iters] = ['start', 'max', 'iters'].map((name) => cli.wholeNumber(name));
const warmup = cli.wholeNumber('warmup', { min: 0 });
const rounds = cli.wholeNumber('rounds');
/** The engine's ucx backend posted and completed each way given (its post and completion choices), one run of each per round. */
const labelled = values['ucx-variants'] !== undefined;
const variants: { name: string; env: Record<string, string> }[] = labelled
  ? cli.listOf('ucx-variants', (v) => {
      const [post, completion, extra] = v.split('/');
      if (extra !== undefined || !(ucxPosts as readonly string[]).includes(post) || !(ucxCompletions as readonly string[]).includes(completion ?? '')) return undefined;
      return { name: v, env: { [UCX_CHOICE_ENV.post]: post, [UCX_CHOICE_ENV.completion]: completion } };
    }, `POST/COMPLETION: POST one of ${ucxPosts.join(', ')}, COMPLETION one of ${ucxCompletions.join(', ')}`)
  : [{ name: 'engine', env: {} }];
if (labelled && values['engine-backend'] !== 'ucx') cli.refuse(`--ucx-variants: the variants are the ucx backend's, and --engine-backend is ${values['engine-backend']}`);
if (new Set(variants.map((v) => v.name)).size !== variants.length) cli.refuse(`--ucx-variants '${values['ucx-variants']}': a variant is named twice`);
const repoRoot = process.cwd();

function nixlbenchBinary(): string {
  if (values.nixlbench) return path.resolve(values.nixlbench);
  try {
    return execFileSync('bash', [path.join(repoRoot, 'scripts/build-nixl.sh'), '--check'], { encoding: 'utf8' }).trim();
  } catch (err) {
    console.error(`side-by-side: no nixlbench: ${String((err as { stdout?: string }).stdout ?? err).trim()}`);
    process.exit(2);
  }
}

/** The folder of this run's logs: the label's, or the date's (-2, -3... when that one exists). */
function logFolder(): string {
  if (smoke) return fs.mkdtempSync(path.join(os.tmpdir(), 'side-by-side-smoke-'));
  if (values.label) return path.join(resultsDir, `nixl-side-by-side-${values.label}`);
  const date = new Date().toISOString().slice(0, 10);
  for (let n = 1; ; n++) {
    const dir = path.join(resultsDir, `nixl-side-by-side-${date}${n > 1 ? `-${n}` : ''}`);
    if (!fs.existsSync(dir)) return dir;
  }
}

/** The engine's ranks load the UCX nixlbench was built with (`<prefix>/ucx/lib`), unless told otherwise. */
function engineUcxLib(binary: string): string | undefined {
  const asked = values['engine-ucx-lib'];
  if (asked === 'system') return undefined;
  const dir = asked ? path.resolve(asked) : path.resolve(path.dirname(binary), '../ucx/lib');
  return fs.existsSync(dir) ? dir : undefined;
}

const binary = nixlbenchBinary();
const logRoot = logFolder();
fs.mkdirSync(logRoot, { recursive: true });
const ucxLib = values['engine-backend'] === 'ucx' && !values.engine ? engineUcxLib(binary) : undefined;
const sides = makeSides({
  repoRoot,
  nixlbench: binary,
  nixlBackend: values['nixl-backend']!,
  engineBackend: values['engine-backend']!,
  runtime,
  engineCommand: values.engine,
  engineEnv: ucxLib ? { LD_LIBRARY_PATH: [ucxLib, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } : {},
});

/** The flags both tools take, as nixlbench spells them. */
function sweepFlags(op: string, batch: number): Flags {
  return {
    op_type: op,
    initiator_seg_type: seg,
    target_seg_type: seg,
    start_block_size: start,
    max_block_size: max,
    start_batch_size: batch,
    max_batch_size: batch,
    num_iter: iters,
    warmup_iter: warmup,
    // nixlbench allocates total_buffer_size per process (default 8 GiB): enough for one step
    total_buffer_size: Math.max(max * batch, 64 * 2 ** 20),
  };
}

/** Per block size, the median of the rounds' figures. */
function medianRows(runs: SideRun[]): Map<number, Row> {
  const blocks = [...new Set(runs.flatMap((r) => [...r.rows.keys()]))].sort((a, b) => a - b);
  const pick = (block: number, key: keyof Row) => {
    const xs = runs.map((r) => r.rows.get(block)?.[key] ?? NaN).filter(Number.isFinite);
    return xs.length > 0 ? median(xs) : NaN;
  };
  return new Map(blocks.map((b) => [b, { gbps: pick(b, 'gbps'), latUs: pick(b, 'latUs'), postUs: pick(b, 'postUs'), txUs: pick(b, 'txUs') }]));
}

/**
 * Both sides' UCX environment for a transport set. NIXL's UCX backend asks every endpoint for peer
 * failure handling, which UCX's shared-memory transports do not claim by default: without
 * UCX_MM_ERROR_HANDLING=y, UCX_TLS=shm leaves NIXL no transport at all ("no active messages
 * transport ... posix/memory - no peer failure handler").
 */
function transportEnv(transport: string): Record<string, string> {
  if (transport === 'default') return {};
  // tcp1m: tcp with UCX's tcp segments at 1 MiB on both sides, the engine's own setting (UCX's
  // default is 8 KiB; runners/xfer/README.md says why the engine raises it)
  if (transport === 'tcp1m') return { UCX_TLS: 'tcp,self', UCX_TCP_TX_SEG_SIZE: '1m', UCX_TCP_RX_SEG_SIZE: '1m' };
  return { UCX_TLS: `${transport},self`, ...(transport === 'shm' ? { UCX_MM_ERROR_HANDLING: 'y' } : {}) };
}

const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
const KiB = 1024;

async function main(): Promise<void> {
  const m = machine();
  const transports = values.transports === undefined ? (values.engine ? ['default'] : ['shm', 'tcp']) : cli.listOf('transports', (t) => t, 'a UCX transport name, tcp1m or default');
  console.log(`side by side: engine ${values['engine-backend']} (UCX from ${ucxLib ?? 'the system'}) vs ${binary} (--backend ${values['nixl-backend']}, ${runtime}), ${seg}, transports ${transports.join(' / ')}, ${rounds} round(s); ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start; logs ${logRoot}`);
  // VRAM: where the ranks are (with one GPU both sides put both ranks on it, and say so)
  const placement = seg === 'VRAM' ? sides.gpuPlacement?.() : undefined;
  if (placement) console.log(placement.note);
  const figures: Record<string, unknown>[] = [];
  const goals: Goal[] = [];
  const summary: (string | number)[][] = [];
  let turn = 0;
  for (const transport of transports) {
    // UCX_LOG_LEVEL=info: the lanes; UCX_PROTO_INFO=y: which protocol and transport each message
    // size takes (printed once per configuration, at its first use in the warm-up)
    const env: Record<string, string> = { UCX_LOG_LEVEL: 'info', UCX_PROTO_INFO: 'y', ...transportEnv(transport) };
    for (const op of ops) {
      for (const batch of batches) {
        const group = `${transport}-${op.toLowerCase()}-b${batch}`;
        const flags = sweepFlags(op, batch);
        const loadBefore = os.loadavg()[0];
        const engineRuns = new Map(variants.map((v) => [v.name, [] as SideRun[]]));
        const nixlRuns: SideRun[] = [];
        for (let r = 1; r <= rounds; r++) {
          const runs = [
            ...variants.map((v) => async () => {
              const folder = labelled ? `engine-${v.name.replace('/', '-')}-r${r}` : `engine-r${r}`;
              engineRuns.get(v.name)!.push(await sides.engine(flags, { ...env, ...v.env }, path.join(logRoot, group, folder)));
            }),
            async () => nixlRuns.push(await sides.nixlbench(flags, env, path.join(logRoot, group, `nixlbench-r${r}`))),
          ];
          // who goes first rotates from one round (and group) to the next
          for (let k = 0; k < runs.length; k++) await runs[(k + turn) % runs.length]();
          turn++;
        }
        const nixl = medianRows(nixlRuns);
        const load = [Number(loadBefore.toFixed(2)), Number(os.loadavg()[0].toFixed(2))];
        for (const variant of variants) {
          const vRuns = engineRuns.get(variant.name)!;
          const engine = medianRows(vRuns);
          const rows = [...nixl.keys()].map((block) => {
            const e = engine.get(block) ?? NO_ROW;
            const n = nixl.get(block)!;
            return {
              block, engineGbps: e.gbps, nixlGbps: n.gbps, bwRatio: e.gbps / n.gbps, engineLatUs: e.latUs, nixlLatUs: n.latUs, latRatio: e.latUs / n.latUs,
              enginePostUs: e.postUs, nixlPostUs: n.postUs, engineTxUs: e.txUs, nixlTxUs: n.txUs,
            };
          });
          const lanes = { engine: [...new Set(vRuns.flatMap((r) => r.lanes))], nixlbench: [...new Set(nixlRuns.flatMap((r) => r.lanes))] };
          const named = labelled ? ` (engine ${variant.name})` : '';
          printTable(`${op}, batch ${batch}, UCX_TLS ${env.UCX_TLS ?? '(unset)'}${named}`, ['block', 'engine GB/s', 'nixlbench GB/s', 'bw ratio', 'engine lat us', 'nixlbench lat us', 'lat ratio'], rows.map((r) => [r.block, fmt(r.engineGbps), fmt(r.nixlGbps), fmt(r.bwRatio, 2), fmt(r.engineLatUs, 2), fmt(r.nixlLatUs, 2), fmt(r.latRatio, 2)]));
          const notes = [...vRuns.map((r) => r.note && `engine: ${r.note}`), ...nixlRuns.map((r) => r.note && `nixlbench: ${r.note}`)].filter(Boolean);
          for (const note of notes) console.log(`note: ${note}`);
          console.log(`lanes: engine ${lanes.engine.join(' | ') || '(none logged)'}; nixlbench ${lanes.nixlbench.join(' | ') || '(none logged)'}; load ${load.join(' -> ')}`);
          figures.push({ transport, env: { ...env, ...variant.env }, ...(named ? { variant: variant.name } : {}), op, batch, rounds, load1: load, rows, lanes, notes });
          const at = (block: number) => rows.find((r) => r.block === block);
          const from64k = rows.filter((r) => r.block >= 64 * KiB).map((r) => r.bwRatio);
          const k4 = at(4 * KiB);
          summary.push([
            transport, ...(labelled ? [variant.name] : []), op, batch, fmt(k4?.latRatio ?? NaN, 2), `${fmt(k4?.enginePostUs ?? NaN, 1)}/${fmt(k4?.engineTxUs ?? NaN, 1)}`, `${fmt(k4?.nixlPostUs ?? NaN, 1)}/${fmt(k4?.nixlTxUs ?? NaN, 1)}`,
            ...[64 * KiB, KiB * KiB, 64 * KiB * KiB].map((b) => fmt(at(b)?.bwRatio ?? NaN, 2)), fmt(minOf(from64k, NaN), 2),
          ]);
          if (seg === 'DRAM') {
            const what = labelled ? `${group} ${variant.name}` : group;
            if (from64k.length > 0) goals.push({ what: `${what}: lowest bandwidth ratio from 64 KiB`, value: Number(minOf(from64k).toFixed(3)), limit: 1.0, atMost: false });
            if (k4) goals.push({ what: `${what}: latency ratio at 4 KiB`, value: Number(k4.latRatio.toFixed(3)), limit: 1.1, atMost: true });
          }
        }
      }
    }
  }
  printTable('engine / nixlbench (post/tx: Avg Post / Avg Tx us at 4 KiB)', ['transport', ...(labelled ? ['engine'] : []), 'op', 'batch', 'lat 4K', 'engine post/tx', 'nixlbench post/tx', 'bw 64K', 'bw 1M', 'bw 64M', 'lowest bw from 64K'], summary);
  printGoals(goals);
  appendResult('nixl-side-by-side', {
    nixlbench: binary, runtime, seg, engineBackend: values['engine-backend'], nixlBackend: values['nixl-backend'],
    engineUcxLib: ucxLib ?? 'system', ...(placement ? { gpus: placement } : {}), logs: path.relative(repoRoot, logRoot), results: figures,
  }, goals);
  if (smoke) fs.rmSync(logRoot, { recursive: true, force: true });
}

main().catch((err: Error) => {
  console.error(`side-by-side: ${err.message}`);
  process.exit(1);
});
