// The two sides of bench/nixl/side-by-side.ts, each run with the same nixlbench flags, in one of
// two ways:
// - through the framework (the default): each side is a `nixl` config, `kind: sweep` for the
//   engine and `kind: nixlbench` for the real tool, run as a job by the nixl type
//   (bench/nixl/config-job.ts) and read by its extractors;
// - directly (`--engine CMD`, the GPU machine's bundle, where there is no checkout to run jobs
//   from): the engine's command run here, nixlbench's two processes as two `nixl-tool run` tasks
//   of the kind's adapter (ASIO runtime), their logs read by the same nixlbench extractor.
// Either way every log stays in the side's folder, and the UCX lanes each side's endpoints got
// (logged at UCX_LOG_LEVEL=info) are read from it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { extractNixlbenchMetrics } from '../../framework/metrics/extractors/nixlbench.ts';
import type { Metric } from '../../framework/metrics/metric.ts';
import { LocalScheduler } from '../../framework/scheduler/local.ts';
import { nixlbenchSpec } from '../../runners/nixl/tools/nixlbench.ts';
import { runToolTask } from '../../runners/nixl/tool-task.ts';
import { TOOL_SPEC_FILE, taskLog } from '../../runners/nixl/tool-spec.ts';
import { ucxLanes } from '../../runners/nixl/ucx-lanes.ts';
import { SHARE_GPU_ENV } from '../../runners/xfer/gpu-share-env.ts';
import { runConfigJob, type ConfigJob } from './config-job.ts';

export type Flags = Record<string, string | number>;

export interface Row {
  gbps: number;
  latUs: number;
  /** nixlbench's split of an iteration: posting the requests, then waiting for them (us). */
  postUs: number;
  txUs: number;
}

const ROW_METRICS: Record<string, keyof Row> = { BW_GBPS: 'gbps', AVG_LAT_US: 'latUs', AVG_POST_US: 'postUs', AVG_TX_US: 'txUs' };
export const NO_ROW: Row = { gbps: NaN, latUs: NaN, postUs: NaN, txUs: NaN };

export interface SideRun {
  rows: Map<number, Row>;
  /** The distinct UCX lane sets its endpoints got (empty without UCX_LOG_LEVEL=info). */
  lanes: string[];
  /** Set when the run failed after printing its whole table (the table is kept, the failure said). */
  note?: string;
}

export interface SideSettings {
  repoRoot: string;
  nixlbench: string;
  /** nixlbench's --backend (UCX) and the engine's backend (ucx, cuda...). */
  nixlBackend: string;
  engineBackend: string;
  /** nixlbench's runtime in framework mode (the direct mode always runs ASIO). */
  runtime: 'ASIO' | 'ETCD';
  /** The engine's command in direct mode; undefined: through the framework. */
  engineCommand?: string;
  /** The environment of the engine's ranks beyond ours (LD_LIBRARY_PATH of nixlbench's UCX...). */
  engineEnv: Record<string, string>;
}

export interface Sides {
  engine(flags: Flags, env: Record<string, string>, dir: string): Promise<SideRun>;
  nixlbench(flags: Flags, env: Record<string, string>, dir: string): Promise<SideRun>;
  /** Where the two ranks' VRAM is (direct mode): a GPU each, or both on one (said in the output). */
  gpuPlacement?(): GpuPlacement;
}

export interface GpuPlacement {
  /** CUDA_VISIBLE_DEVICES of rank 0 and rank 1. */
  devices: [string, string];
  shared: boolean;
  /** One line for the output and the figures' record. */
  note: string;
}

/**
 * The GPUs this machine shows (CUDA_VISIBLE_DEVICES when set, else `nvidia-smi -L`), and where the
 * two ranks go: rank k on the k-th GPU when there are two or more; with one, both on it, the
 * engine's ranks allowed to share it (XFER_RANKS_MAY_SHARE_GPU=1): every code path runs, but a
 * transfer is a copy inside one device, not between two.
 */
export function placeTwoRanks(env: NodeJS.ProcessEnv = process.env, listGpus = nvidiaSmiGpus): GpuPlacement {
  const visible = env.CUDA_VISIBLE_DEVICES?.trim() ? env.CUDA_VISIBLE_DEVICES.split(',').map((d) => d.trim()).filter(Boolean) : listGpus();
  if (visible.length >= 2) return { devices: [visible[0], visible[1]], shared: false, note: `GPUs: rank 0 on device ${visible[0]}, rank 1 on device ${visible[1]}` };
  const only = visible[0] ?? '0';
  return {
    devices: [only, only],
    shared: true,
    note: `one GPU visible: both ranks of each side on device ${only} (${SHARE_GPU_ENV}=1 for the engine); every code path runs, the figures are copies inside one GPU, not GPU to GPU`,
  };
}

function nvidiaSmiGpus(): string[] {
  try {
    const out = execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\n').flatMap((line) => line.match(/^GPU (\d+):/)?.[1] ?? []);
  } catch {
    return [];
  }
}

/** B/W, Avg Lat., Avg Post and Avg Tx per block size. */
export function rowsOf(metrics: readonly Metric[]): Map<number, Row> {
  const rows = new Map<number, Row>();
  for (const m of metrics) {
    const key = ROW_METRICS[m.name];
    if (!key) continue;
    const block = Number(m.labels.block_size);
    const row = rows.get(block) ?? { ...NO_ROW };
    row[key] = m.value;
    rows.set(block, row);
  }
  return rows;
}


const readIf = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/** The block sizes a sweep of `flags` prints, start to max doubling. */
function blocksOf(flags: Flags): number[] {
  const blocks: number[] = [];
  for (let b = Number(flags.start_block_size); b <= Number(flags.max_block_size); b *= 2) blocks.push(b);
  return blocks;
}

/**
 * A side's run: its table, read as the framework reads it. A run that failed (`failure`) is kept
 * only when it had printed a row for every block size first, with the failure and the log's last
 * lines in its note: nixlbench's ASIO runtime at times ends rank 0 with "ASIO Read head failed:
 * End of file" after the table, when its peer has already gone.
 */
function sideRun(what: string, rows: Map<number, Row>, flags: Flags, log: string, failure: string | undefined): SideRun {
  const lanes = ucxLanes(log);
  if (!failure) return { rows, lanes };
  const missing = blocksOf(flags).filter((b) => !Number.isFinite(rows.get(b)?.gbps));
  if (missing.length > 0) throw new Error(`${what}: ${failure}; no row for block size(s) ${missing.join(', ')}`);
  const tail = log.trimEnd().split('\n').filter((l) => !/^srun: /.test(l)).slice(-2).join(' / ');
  return { rows, lanes, note: `${failure} after its whole table (${tail.trim()})` };
}

export function makeSides(settings: SideSettings): Sides {
  return settings.engineCommand ? directSides(settings, settings.engineCommand) : frameworkSides(settings);
}

function frameworkSides(s: SideSettings): Sides {
  /** A local scheduler whose jobs get our environment and `env` (as sbatch --export=ALL would), closed after `name`'s job. */
  const runOn = async (env: Record<string, string>, name: string, config: Record<string, unknown>, dir: string) => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'side-by-side-scheduler-'));
    const scheduler = new LocalScheduler({ stateDir, env: { ...process.env, ...env } });
    try {
      return await runConfigJob(scheduler, name, config, dir, s.repoRoot);
    } finally {
      await scheduler.close();
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  };
  const common = { slurm: { job_time: '00:30:00' } };
  const finish = (name: string, run: ConfigJob, rankLog: string, flags: Flags): SideRun => {
    if (run.problems.length > 0) throw new Error(`${name}: ${run.problems.join('; ')} (logs in ${run.logDir})\n${run.out.slice(-2000)}`);
    const failure = run.status.state === 'COMPLETED' ? undefined : `job ${run.status.state} (exit code ${run.status.exitCode ?? 'unknown'}, logs in ${run.logDir})`;
    return sideRun(name, rowsOf(run.metrics), flags, readIf(path.join(run.logDir, rankLog)), failure);
  };
  return {
    async engine(flags, env, dir) {
      const { UCX_TLS: tls, ...rest } = env;
      const config = {
        metadata: { description: `the engine's sweep beside the real nixlbench (${s.engineBackend}${tls ? `, UCX_TLS=${tls}` : ''})` },
        benchmark: { kind: 'sweep', ranks: 2, backend: s.engineBackend },
        ...common,
        sweep: flags,
        ...(tls && s.engineBackend === 'ucx' ? { ucx: { tls } } : {}),
      };
      const run = await runOn({ ...s.engineEnv, ...rest }, 'engine_sweep', config, dir);
      return finish('engine sweep', run, 'sweep.log', flags);
    },
    async nixlbench(flags, env, dir) {
      const config = {
        metadata: { description: `the real nixlbench (${s.nixlBackend}${env.UCX_TLS ? `, UCX_TLS=${env.UCX_TLS}` : ''}, ${s.runtime} runtime)` },
        benchmark: { kind: 'nixlbench', ranks: 2, backend: s.nixlBackend.toLowerCase() },
        ...common,
        nixlbench: { path: s.nixlbench, runtime: s.runtime, registration_timeout_s: 300, options: { backend: s.nixlBackend, ...flags }, env },
      };
      const run = await runOn({}, 'nixlbench', config, dir);
      return finish('nixlbench', run, 'nixlbench.log', flags);
    },
  };
}

function directSides(s: SideSettings, engineCommand: string): Sides {
  const tableOf = (text: string, what: string) => {
    const { metrics, problems } = extractNixlbenchMetrics(text);
    if (problems.length > 0) throw new Error(`${what}: ${problems.join('; ')}`);
    return rowsOf(metrics);
  };
  let placement: GpuPlacement | undefined;
  const placed = () => (placement ??= placeTwoRanks());
  const vram = (flags: Flags) => flags.initiator_seg_type === 'VRAM' || flags.target_seg_type === 'VRAM';
  return {
    gpuPlacement: placed,
    async engine(flags, env, dir) {
      fs.mkdirSync(dir, { recursive: true });
      if (vram(flags) && placed().shared) env = { ...env, [SHARE_GPU_ENV]: '1' };
      const file = path.join(dir, 'sweep.log');
      const [command, ...words] = engineCommand.split(' ');
      const argv = [...words, '--backend', s.engineBackend, ...Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)])];
      const r = await execa(command, argv, { cwd: s.repoRoot, all: true, reject: false, env: { ...s.engineEnv, ...env } });
      fs.writeFileSync(file, `$ ${command} ${argv.join(' ')}\n${r.all}\n`);
      const text = r.all ?? '';
      return sideRun('engine sweep', tableOf(text, `engine sweep (${file})`), flags, text, r.exitCode === 0 ? undefined : `exit ${r.exitCode} (log ${file})`);
    },
    async nixlbench(flags, env, dir) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      const spec = nixlbenchSpec({ path: s.nixlbench, runtime: 'ASIO', options: { backend: s.nixlBackend, ...flags }, env }, { logDir: dir, configDir: s.repoRoot, ranks: 2, nodes: 1, tag: path.basename(dir) }, 'ucx');
      const specFile = path.join(dir, TOOL_SPEC_FILE);
      fs.writeFileSync(specFile, `${JSON.stringify(spec, null, 2)}\n`);
      // nixlbench puts both ranks' VRAM on device 0 of what it sees (the target's device id is its
      // rank minus the initiators'); a GPU each, as SLURM's --gpus-per-task gives a task, makes the
      // transfer cross-GPU like the engine's (rank k on GPU k); with one GPU both see that one
      const gpuOf = (k: number) => (vram(flags) ? { CUDA_VISIBLE_DEVICES: placed().devices[k] } : {});
      const task = (k: number) => runToolTask(specFile, { ...process.env, SLURM_PROCID: String(k), SLURM_NTASKS: '2', SLURM_LOCALID: String(k), ...gpuOf(k) });
      const codes = await Promise.all([task(0), task(1)]);
      const rank0 = path.join(dir, taskLog(spec, spec.startOrder[0]));
      const text = readIf(rank0);
      return sideRun('nixlbench', tableOf(text, `nixlbench (${rank0})`), flags, text, codes.every((c) => c === 0) ? undefined : `exit codes ${codes.join(', ')} (logs in ${dir})`);
    },
  };
}
