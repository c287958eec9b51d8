// Faults of the llamacpp serving job, run for real by job.sh on this machine (launch.launcher:
// direct): a context or a generation server killed while the client runs fails the job naming
// that server, and no process of the job is left; a model that cannot be served (a GGUF cut off)
// fails the job with the one sentence that says why, in the server's log and the job's output.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { afterAll, expect, it } from 'vitest';
import { disaggType } from '../../framework/types/disagg.ts';
import { freePortRange } from '../../runners/common/free-port.ts';
import { dummyModel } from '../../runners/llamacpp/gguf/dummy-model.ts';

const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'llamacpp-faults-'));
const modelCache = path.join(tmpdir(), 'disagg-bench-test-models');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const shipped = parse(readFileSync(path.join(root, 'test_configs/disagg/perf/llamacpp-tiny_128-32_ctx1_gen1_cpu.yaml'), 'utf8'));

async function buildJob(name: string, patch: { model_path?: string; output_length?: number; multi_round?: number }) {
  const logDir = path.join(scratch, name);
  const base = await freePortRange(4);
  const config = structuredClone(shipped);
  config.launch = { ...config.launch, launcher: 'direct', health_interval_s: 1, base_port: base, router_port: base + 2 };
  config.benchmark = { ...config.benchmark, concurrency_list: '1', input_length: 64, output_length: patch.output_length ?? 32, multi_round: patch.multi_round ?? 1 };
  if (patch.model_path) config.environment.model_path = patch.model_path;
  const built = await disaggType.buildJob({ testId: `disagg_perf_${name}`, category: 'perf', config, logDir, workDir: root, packageRoot: root, gpuType: undefined });
  return { logDir, script: built.scriptPath, ports: [base, base + 1, base + 2, base + 3] };
}

/** Pids of processes whose command line holds `text`. */
function pidsWith(text: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      return cmd.includes(text) && Number(d) !== process.pid ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

const runJob = (script: string) => execa('bash', [script], { cwd: root, reject: false, all: true, stdin: 'ignore', env: { SLURM_JOB_NODELIST: '', DISAGG_MODEL_CACHE: modelCache } });

for (const [victim, role] of [['CTX_0', 'ctx'], ['GEN_0', 'gen']] as const) {
  it(`${victim} killed while the client runs fails the job naming it, and nothing of the job is left running`, async () => {
    dummyModel('tiny'); // written before the servers start, as a run's first job would
    const job = await buildJob(`kill-${role}`, { output_length: 256, multi_round: 200 });
    const child = runJob(job.script);
    const bench = path.join(job.logDir, '6_bench.log');
    const running = () => existsSync(bench) && readFileSync(bench, 'utf8').includes('Benchmarking with concurrency 1');
    for (const deadline = Date.now() + 90_000; !running(); await new Promise((r) => setTimeout(r, 100))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the client never started: ${(await child).all}`);
    }
    const port = role === 'gen' ? job.ports[0] : job.ports[1];
    const [pid] = pidsWith(`llama-server --role ${role} --index 0 --model dummy:tiny --host 127.0.0.1 --port ${port}`);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    const result = await child;
    expect(result.exitCode).not.toBe(0);
    expect(result.all).toMatch(new RegExp(`${victim} (exited|died)`));
    expect(pidsWith(job.logDir)).toEqual([]);
    for (const p of job.ports) expect(pidsWith(`--port ${p}`)).toEqual([]);
  }, 180_000);
}

it('a GGUF cut off fails the job with the sentence that says so', async () => {
  const cut = path.join(scratch, 'cut.gguf');
  copyFileSync(dummyModel('tiny'), cut);
  truncateSync(cut, statSync(cut).size - 4096);
  const job = await buildJob('cut-model', { model_path: cut });
  const result = await runJob(job.script);
  expect(result.exitCode).not.toBe(0);
  const sentence = new RegExp(`${cut.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is cut off: its tensors end at byte \\d+ but the file has \\d+`);
  // Both servers load the model; whichever finds the cut first ends the job, and the other may be
  // stopped before it gets that far: the sentence is in the log of at least one of them.
  const serverLogs = ['3_output_GEN_0.log', '3_output_CTX_0.log'].map((f) => path.join(job.logDir, f)).filter(existsSync);
  expect(serverLogs.map((f) => readFileSync(f, 'utf8')).filter((text) => sentence.test(text)).length).toBeGreaterThan(0);
  expect(result.all).toMatch(sentence);
  expect(pidsWith(job.logDir)).toEqual([]);
}, 120_000);
