// What a job of a real NIXL tool runs, written by the tool kinds into the job's log folder and
// read by every task (`disagg-bench nixl-tool run <spec>`) and by the job's report step.
import type { FlagProbe } from './flag-probe.ts';
import { READ_LIMITS, readTextFileSync } from '../common/read-file.ts';
import { InputError } from '../common/errors.ts';

export const TOOL_SPEC_FILE = 'nixl-tool-spec.json';

export type ToolName = 'nixlbench' | 'kvbench' | 'nixl-ep-perf' | 'lmcache';

export interface ToolEtcd {
  /** private: the job starts its own (folder `dir`); external: an etcd that is already up (`endpoints`). */
  mode: 'private' | 'external';
  dir?: string;
  endpoints?: string;
  /** The job's namespace, wiped before the run. */
  prefix: string;
}

export interface ToolSpec {
  tool: ToolName;
  /**
   * One command per task (SLURM_PROCID); `{etcd}` becomes the etcd endpoint, `{task}` the task
   * index, `{asio_address}` / `{asio_port}` the ASIO runtime's listener (`listen` ordering).
   */
  commands: string[][];
  /** Environment of every task; values take the same placeholders. */
  env: Record<string, string>;
  /** Also set torchrun's RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT from the launcher. */
  torchEnv?: boolean;
  etcd?: ToolEtcd;
  /** Task indices in the order they start. */
  startOrder: number[];
  /**
   * How a task waits for those before it: `registration` until that many have registered with
   * nixlbench's etcd runtime (its rank is its arrival order), `delay` a fixed time per position,
   * `listen` until the first task's tool listens on the port it picked (nixlbench's ASIO runtime:
   * runners/nixl/asio-turn.ts).
   */
  ordering: { kind: 'registration'; sizeKey: string; timeoutS: number } | { kind: 'delay'; seconds: number } | { kind: 'listen'; timeoutS: number };
  /** Where the tool's per-task output, status files and node artefacts go. */
  logDir: string;
  /** Flags whose spelling depends on the installed version: chosen from its --help, appended to each command. */
  probe?: FlagProbe;
}

export function readToolSpec(file: string): ToolSpec {
  try {
    return JSON.parse(readTextFileSync(file, READ_LIMITS.record)) as ToolSpec;
  } catch (err) {
    throw new InputError(`cannot read the tool spec ${file}: ${(err as Error).message}`);
  }
}

/** Replaces `{etcd}`, `{task}`, `{asio_address}` and `{asio_port}` in a word. */
export function fillPlaceholders(word: string, values: { etcd?: string; task: number; asio?: { address: string; port: number } }): string {
  return word
    .replace(/\{etcd\}/g, values.etcd ?? '')
    .replace(/\{task\}/g, String(values.task))
    .replace(/\{asio_address\}/g, values.asio?.address ?? '')
    .replace(/\{asio_port\}/g, values.asio ? String(values.asio.port) : '');
}

/** Per-task output and exit-status files. */
export const taskLog = (spec: Pick<ToolSpec, 'tool'>, task: number) => `${spec.tool}-task${task}.log`;
export const taskStatus = (spec: Pick<ToolSpec, 'tool'>, task: number) => `${spec.tool}-task${task}.status`;
