// One task of a real NIXL tool's job (`disagg-bench nixl-tool run <spec>`, under srun): keeps
// its node's artefacts (first task of a node), waits for its turn, runs the tool with the job's
// etcd endpoint filled in, and tees the output into <tool>-task<k>.log and the job's rank log.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { slurmStepNodes } from '../common/hostlist.ts';
import { endpointOf, etcdctl } from './etcd.ts';
import { collectNodeArtefacts } from './node-artefacts.ts';
import { pickFlagWords, runHelp } from './flag-probe.ts';
import { fillPlaceholders, readToolSpec, taskLog, taskStatus, TOOL_SPEC_FILE, type ToolSpec } from './tool-spec.ts';
import { FailureError } from '../common/errors.ts';
import { announceWhenListening, awaitAsioEndpoint, pickAsioEndpoint, type AsioEndpoint } from './asio-turn.ts';

type Env = NodeJS.ProcessEnv;

/** This task's place in the job, from srun's variables (torchrun's as a fallback, else a single task). */
export function taskOf(env: Env): { task: number; world: number; localId: number; node: string } {
  const num = (value: string | undefined, fallback: number) => (value === undefined || value === '' ? fallback : Number(value));
  return {
    task: num(env.SLURM_PROCID ?? env.RANK, 0),
    world: num(env.SLURM_NTASKS ?? env.WORLD_SIZE, 1),
    localId: num(env.SLURM_LOCALID ?? env.LOCAL_RANK, 0),
    node: env.SLURMD_NODENAME ?? os.hostname(),
  };
}

/** torchrun's variables for a task started by srun: rank 0's node is the master. */
export function torchEnvOf(env: Env, task: number, world: number, localId: number): Record<string, string> {
  const nodes = slurmStepNodes(env);
  const job = env.SLURM_JOB_ID ?? String(process.ppid);
  let hash = 0;
  for (const c of job) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return {
    RANK: String(task),
    WORLD_SIZE: String(world),
    LOCAL_RANK: String(localId),
    MASTER_ADDR: env.MASTER_ADDR ?? nodes[0] ?? '127.0.0.1',
    MASTER_PORT: env.MASTER_PORT ?? String(29_500 + (hash % 20_000)),
  };
}

export async function runToolTask(specFile: string, env: Env = process.env): Promise<number> {
  const spec = readToolSpec(specFile);
  const { task, world, localId, node } = taskOf(env);
  if (world !== spec.commands.length) {
    throw new FailureError(`the spec has commands for ${spec.commands.length} task(s) but this job step has ${world}`);
  }
  if (localId === 0) await collectNodeArtefacts(spec.logDir, node);
  const endpoint = spec.etcd ? (spec.etcd.mode === 'private' ? endpointOf(spec.etcd.dir!) : spec.etcd.endpoints) : undefined;
  const asio = await waitForTurn(spec, task, endpoint, env);
  const fill = (word: string) => fillPlaceholders(word, { etcd: endpoint, task, asio });
  const [command, ...args] = spec.commands[task].map(fill);
  const childEnv: Env = { ...env, ...(spec.torchEnv ? torchEnvOf(env, task, world, localId) : {}) };
  for (const [name, value] of Object.entries(spec.env)) childEnv[name] = fill(value);
  if (spec.probe) {
    try {
      const words = pickFlagWords(await runHelp(spec.probe.help.map(fill), childEnv), spec.probe.choices, spec.probe.help.map(fill).join(' '));
      console.log(`nixl-tool: task ${task}: flags chosen from the tool's --help: ${words.join(' ') || '(its defaults)'}`);
      args.push(...words);
    } catch (err) {
      const message = `nixl-tool: task ${task}: cannot tell which flags the tool takes: ${(err as Error).message}`;
      console.error(message);
      fs.writeFileSync(path.join(spec.logDir, taskLog(spec, task)), `${message}\n`);
      fs.writeFileSync(path.join(spec.logDir, taskStatus(spec, task)), '2\n');
      return 2;
    }
  }
  console.log(`nixl-tool: task ${task} on ${node}: ${[command, ...args].join(' ')}`);
  let running = true;
  const done = runTee(command, args, childEnv, path.join(spec.logDir, taskLog(spec, task))).finally(() => (running = false));
  if (asio && spec.ordering.kind === 'listen' && spec.startOrder[0] === task) {
    const announced = await announceWhenListening(spec.logDir, asio, () => running, spec.ordering.timeoutS);
    console.log(`nixl-tool: task ${task}: ${announced ? `listening on ${asio.address}:${asio.port} (the ASIO runtime's rank 0)` : `never listened on ${asio.address}:${asio.port}`}`);
  }
  const code = await done;
  fs.writeFileSync(path.join(spec.logDir, taskStatus(spec, task)), `${code}\n`);
  return code;
}

/**
 * Waits until the tasks before this one in the start order have started (registered, or listen
 * on the ASIO port: then the listener's endpoint, which the first task picks).
 */
async function waitForTurn(spec: ToolSpec, task: number, endpoint: string | undefined, env: Env): Promise<AsioEndpoint | undefined> {
  const position = spec.startOrder.indexOf(task);
  const { ordering } = spec;
  if (ordering.kind === 'listen') {
    if (position === 0) return pickAsioEndpoint(new Set(slurmStepNodes(env)).size || 1);
    console.log(`nixl-tool: task ${task} starts once task ${spec.startOrder[0]} listens on its ASIO port`);
    return awaitAsioEndpoint(spec.logDir, task, spec.startOrder[0], ordering.timeoutS, () => endedTask(spec, [spec.startOrder[0]]));
  }
  if (position <= 0) return undefined;
  if (ordering.kind === 'delay') {
    await sleep(position * ordering.seconds * 1000);
    return undefined;
  }
  if (!endpoint) throw new FailureError('registration order needs the job\'s etcd');
  console.log(`nixl-tool: task ${task} starts after ${position} registration(s) under ${ordering.sizeKey} (the tool ranks processes by arrival)`);
  const deadline = Date.now() + ordering.timeoutS * 1000;
  const before = spec.startOrder.slice(0, position);
  for (;;) {
    const value = (await etcdctl(endpoint, ['get', ordering.sizeKey, '--print-value-only'])).trim();
    if (Number(value || 0) >= position) return undefined;
    const ended = endedTask(spec, before);
    if (ended) throw new FailureError(`task ${task}: ${ended} before ${position} task(s) had registered under ${ordering.sizeKey}; not started (see its log)`);
    if (Date.now() > deadline) {
      throw new FailureError(`task ${task}: only ${value || 0} of the ${position} task(s) before it registered under ${ordering.sizeKey} within ${ordering.timeoutS} s (did they fail? see their logs)`);
    }
    await sleep(200);
  }
}

/**
 * The first of `tasks` whose tool has already ended in this run of the job, as "task K ended
 * (exit code C)": its status file, newer than the job's spec (a file of an earlier attempt in the
 * same folder is older). A task that ends before the ones after it have started has failed: the
 * tool's ranks wait for each other.
 */
export function endedTask(spec: ToolSpec, tasks: readonly number[]): string | undefined {
  let since: number;
  try {
    since = fs.statSync(path.join(spec.logDir, TOOL_SPEC_FILE)).mtimeMs;
  } catch {
    since = 0;
  }
  for (const k of tasks) {
    const file = path.join(spec.logDir, taskStatus(spec, k));
    try {
      if (fs.statSync(file).mtimeMs >= since) return `task ${k} ended (exit code ${fs.readFileSync(file, 'utf8').trim()})`;
    } catch {
      // no status yet: still running, or not started
    }
  }
  return undefined;
}

/** Runs a command, copying its output to ours and into `logFile`; its exit code (127: not found). */
function runTee(command: string, args: string[], env: Env, logFile: string): Promise<number> {
  const log = fs.createWriteStream(logFile);
  return new Promise((resolve) => {
    let done = false;
    const finish = (code: number, note?: string) => {
      if (done) return;
      done = true;
      log.end(note ? `${note}\n` : undefined, () => resolve(code));
    };
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (process.stdout.write(chunk), log.write(chunk)));
    child.stderr.on('data', (chunk: Buffer) => (process.stderr.write(chunk), log.write(chunk)));
    child.once('error', (err: NodeJS.ErrnoException) => {
      const message = `nixl-tool: ${command}: ${err.code === 'ENOENT' ? 'not found (is the tool installed? set its path in the config)' : err.message}`;
      console.error(message);
      finish(127, message);
    });
    child.once('close', (code, signal) => finish(code ?? (signal ? 128 : 1)));
  });
}
