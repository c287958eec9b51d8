// The engine's `sweep` beside REAL nixlbench (built by scripts/build-nixl.sh), same machine, same
// run, same flags: for each op (READ, WRITE) and batch size (1, 16), one engine sweep and one
// nixlbench run over block sizes 4 KiB..64 MiB, alternating which goes first. nixlbench runs
// through the framework's `nixlbench` kind: its command lines come from the kind's adapter
// (runners/nixl/tools/nixlbench.ts, ASIO runtime: 2 processes, no etcd) and each of its two
// processes is a `nixl-tool run` task (runners/nixl/tool-task.ts), whose output is the log kept.
// Both tables are read with the project's nixlbench extractor. Ratios: engine / nixlbench
// bandwidth per block size, engine / nixlbench Avg Lat. Goals (host memory): bandwidth >= 1.0x
// from 64 KiB up, latency <= 1.1x at 4 KiB.
//   node --import tsx bench/nixl/side-by-side.ts [--nixlbench PATH] [--engine-backend ucx]
//        [--seg DRAM|VRAM] [--iters 200] [--warmup 20] [--batches 1,16] [--ops READ,WRITE]
//        [--engine "node bin/disagg-bench.js sweep --ranks 2"] [--label NAME]
// Run from the repository root. Logs: bench/results/nixl-side-by-side-<label>/ (one file per
// run); figures appended to bench/results/nixl-side-by-side.jsonl. On the GPU machine, bundled:
// bench/nixl/gpu-run.sh.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { execa } from 'execa';
import { extractNixlbenchMetrics } from '../../framework/metrics/extractors/nixlbench.ts';
import { nixlbenchSpec } from '../../runners/nixl/tools/nixlbench.ts';
import { runToolTask } from '../../runners/nixl/tool-task.ts';
import { TOOL_SPEC_FILE, taskLog } from '../../runners/nixl/tool-spec.ts';
import { appendResult, machine, printGoals, printTable, resultsDir, type Goal } from '../lib/report.ts';
import { minOf } from '../../runners/common/stats.ts';

const { values } = parseArgs({
  options: {
    nixlbench: { type: 'string' },
    'engine-backend': { type: 'string', default: 'ucx' },
    'nixl-backend': { type: 'string', default: 'UCX' },
    seg: { type: 'string', default: 'DRAM' },
    iters: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    batches: { type: 'string', default: '1,16' },
    ops: { type: 'string', default: 'READ,WRITE' },
    start: { type: 'string', default: '4096' },
    max: { type: 'string', default: '67108864' },
    engine: { type: 'string', default: 'node bin/disagg-bench.js sweep --ranks 2' },
    label: { type: 'string', default: new Date().toISOString().slice(0, 10) },
  },
});
// The engine's command runs here; bundled (the GPU machine) there is no bench/ beside the script.
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

const binary = nixlbenchBinary();
const logRoot = path.join(resultsDir, `nixl-side-by-side-${values.label}`);
fs.mkdirSync(logRoot, { recursive: true });

/** The flags both tools take, as nixlbench spells them. */
function sweepFlags(op: string, batch: number): Record<string, string | number> {
  const max = Number(values.max);
  return {
    op_type: op,
    initiator_seg_type: values.seg!,
    target_seg_type: values.seg!,
    start_block_size: Number(values.start),
    max_block_size: max,
    start_batch_size: batch,
    max_batch_size: batch,
    num_iter: Number(values.iters),
    warmup_iter: Number(values.warmup),
    // nixlbench allocates total_buffer_size per process (default 8 GiB): enough for one step
    total_buffer_size: Math.max(max * batch, 64 * 2 ** 20),
  };
}

interface Row {
  gbps: number;
  latUs: number;
}

function rowsOf(text: string, what: string): Map<number, Row> {
  const { metrics, problems } = extractNixlbenchMetrics(text);
  if (problems.length > 0) throw new Error(`${what}: ${problems.join('; ')}`);
  const rows = new Map<number, Row>();
  for (const m of metrics) {
    const block = Number(m.labels.block_size);
    const row = rows.get(block) ?? { gbps: NaN, latUs: NaN };
    if (m.name === 'BW_GBPS') row.gbps = m.value;
    if (m.name === 'AVG_LAT_US') row.latUs = m.value;
    rows.set(block, row);
  }
  return rows;
}

async function engineRun(op: string, batch: number, file: string): Promise<Map<number, Row>> {
  const [command, ...words] = values.engine!.split(' ');
  const flags = Object.entries(sweepFlags(op, batch)).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const argv = [...words, '--backend', values['engine-backend']!, ...flags];
  const r = await execa(command, argv, { cwd: repoRoot, all: true, reject: false });
  fs.writeFileSync(file, `$ ${command} ${argv.join(' ')}\n${r.all}\n`);
  if (r.exitCode !== 0) throw new Error(`engine sweep: exit ${r.exitCode} (log ${file})`);
  return rowsOf(r.all ?? '', `engine sweep (${file})`);
}

/** Real nixlbench through the kind's adapter and two `nixl-tool run` tasks (ASIO runtime). */
async function nixlbenchRun(op: string, batch: number, name: string): Promise<Map<number, Row>> {
  const logDir = path.join(logRoot, name);
  fs.rmSync(logDir, { recursive: true, force: true });
  fs.mkdirSync(logDir, { recursive: true });
  const spec = nixlbenchSpec({ path: binary, runtime: 'ASIO', options: { backend: values['nixl-backend']!, ...sweepFlags(op, batch) } }, { logDir, configDir: repoRoot, ranks: 2, nodes: 1, tag: name }, 'ucx');
  const specFile = path.join(logDir, TOOL_SPEC_FILE);
  fs.writeFileSync(specFile, `${JSON.stringify(spec, null, 2)}\n`);
  // nixlbench puts both ranks' VRAM on device 0 of what it sees (the target's device id is its
  // rank minus the initiators'); a GPU each, as SLURM's --gpus-per-task gives a task, makes the
  // transfer cross-GPU like the engine's (rank k on GPU k)
  const gpuOf = (k: number) => (values.seg === 'VRAM' ? { CUDA_VISIBLE_DEVICES: String(k) } : {});
  const task = (k: number) => runToolTask(specFile, { ...process.env, SLURM_PROCID: String(k), SLURM_NTASKS: '2', SLURM_LOCALID: String(k), ...gpuOf(k) });
  const codes = await Promise.all([task(0), task(1)]);
  const rank0 = path.join(logDir, taskLog(spec, spec.startOrder[0]));
  if (codes.some((c) => c !== 0)) throw new Error(`nixlbench: exit codes ${codes.join(', ')} (logs in ${logDir})`);
  return rowsOf(fs.readFileSync(rank0, 'utf8'), `nixlbench (${rank0})`);
}

const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

async function main(): Promise<void> {
  const m = machine();
  console.log(`side by side: engine sweep --backend ${values['engine-backend']} vs ${binary} (--backend ${values['nixl-backend']}), ${values.seg}, ${m.nproc} CPUs (${m.cpuModel}), load ${m.load1AtStart} at start`);
  const figures: Record<string, unknown>[] = [];
  const goals: Goal[] = [];
  let engineFirst = true;
  for (const op of values.ops!.split(',')) {
    for (const batch of values.batches!.split(',').map(Number)) {
      const tag = `${op.toLowerCase()}-b${batch}`;
      const runEngine = () => engineRun(op, batch, path.join(logRoot, `engine-${tag}.log`));
      const runNixl = () => nixlbenchRun(op, batch, `nixlbench-${tag}`);
      let engine: Map<number, Row>;
      let nixl: Map<number, Row>;
      if (engineFirst) {
        engine = await runEngine();
        nixl = await runNixl();
      } else {
        nixl = await runNixl();
        engine = await runEngine();
      }
      engineFirst = !engineFirst;
      const rows = [...nixl.keys()].sort((a, b) => a - b).map((block) => {
        const e = engine.get(block) ?? { gbps: NaN, latUs: NaN };
        const n = nixl.get(block)!;
        return { block, engineGbps: e.gbps, nixlGbps: n.gbps, bwRatio: e.gbps / n.gbps, engineLatUs: e.latUs, nixlLatUs: n.latUs, latRatio: e.latUs / n.latUs };
      });
      printTable(`${op}, batch ${batch}`, ['block', 'engine GB/s', 'nixlbench GB/s', 'bw ratio', 'engine lat us', 'nixlbench lat us', 'lat ratio'], rows.map((r) => [r.block, fmt(r.engineGbps), fmt(r.nixlGbps), fmt(r.bwRatio, 2), fmt(r.engineLatUs, 2), fmt(r.nixlLatUs, 2), fmt(r.latRatio, 2)]));
      figures.push({ op, batch, rows });
      if (values.seg === 'DRAM') {
        const from64k = rows.filter((r) => r.block >= 65536).map((r) => r.bwRatio);
        goals.push({ what: `${op} batch ${batch}: lowest bandwidth ratio from 64 KiB`, value: Number(minOf(from64k).toFixed(3)), limit: 1.0, atMost: false });
        const at4k = rows.find((r) => r.block === 4096);
        if (at4k) goals.push({ what: `${op} batch ${batch}: latency ratio at 4 KiB`, value: Number(at4k.latRatio.toFixed(3)), limit: 1.1, atMost: true });
      }
    }
  }
  printGoals(goals);
  appendResult('nixl-side-by-side', { nixlbench: binary, seg: values.seg, engineBackend: values['engine-backend'], nixlBackend: values['nixl-backend'], ucxTls: process.env.UCX_TLS ?? 'unset', logs: path.relative(repoRoot, logRoot), results: figures }, goals);
}

main().catch((err: Error) => {
  console.error(`side-by-side: ${err.message}`);
  process.exit(1);
});
