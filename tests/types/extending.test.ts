// docs/extending.md, followed to the letter: its code blocks are applied to a copy of the
// repository's source (a new file where it says `new`, its diff where it says `edit`), and the copy
// then runs: the new scheduler is chosen by SCHEDULER and takes a job, the new launcher starts a
// serving job's steps, the new test type lists and validates its configs, and the stand-in serving
// engine's table alone makes a config's job run its commands. The file counts of the page's table are counted from the same blocks, so
// the page cannot promise fewer files than it takes.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../framework/scheduler/create.ts';
import { autoSelectWords, schedulerNames } from '../../framework/scheduler/registry.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const page = readFileSync(path.join(repoRoot, 'docs/extending.md'), 'utf8');

interface Block {
  section: string;
  kind: 'new' | 'edit';
  file: string;
  body: string;
}

/** The page's `<!-- extending:new|edit FILE -->` blocks, each with the `## ` section it is in. */
function blocks(): Block[] {
  const found: Block[] = [];
  for (const m of page.matchAll(/<!-- extending:(new|edit) (\S+) -->\n```\w+\n([\s\S]*?)\n```/g)) {
    const section = [...page.slice(0, m.index).matchAll(/^## (.+)$/gm)].at(-1)?.[1] ?? '';
    found.push({ section, kind: m[1] as Block['kind'], file: m[2], body: m[3] });
  }
  return found;
}

/** One hunk of a diff block applied: its context and `-` lines, contiguous, found once, become its context and `+` lines. */
function applyEdit(text: string, diff: string, file: string): string {
  const lines = diff.split('\n');
  const before = lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1)).join('\n');
  const after = lines.filter((l) => !l.startsWith('-')).map((l) => l.slice(1)).join('\n');
  const at = text.indexOf(before);
  if (at < 0 || text.indexOf(before, at + 1) >= 0) throw new Error(`docs/extending.md: ${file}: the lines the diff changes are not found once:\n${before}`);
  return text.slice(0, at) + after + text.slice(at + before.length);
}

const copy = mkdtempSync(path.join(tmpdir(), 'extending-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

beforeAll(() => {
  for (const part of ['framework', 'runners', 'bin', 'package.json', 'tsconfig.json']) cpSync(path.join(repoRoot, part), path.join(copy, part), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(copy, 'node_modules'));
  for (const b of blocks()) {
    const file = path.join(copy, b.file);
    if (b.kind === 'new') {
      if (existsSync(file)) throw new Error(`docs/extending.md: ${b.file} exists already; a new file was expected`);
      writeFileSync(file, `${b.body}\n`);
    } else {
      writeFileSync(file, applyEdit(readFileSync(file, 'utf8'), b.body, b.file));
    }
  }
});

/** The files a section's blocks create or change, and the lines its edits add. */
function cost(section: string): { files: string[]; addedLines: string[] } {
  const mine = blocks().filter((b) => b.section === section);
  return {
    files: [...new Set(mine.map((b) => b.file))],
    addedLines: mine.filter((b) => b.kind === 'edit').flatMap((b) => b.body.split('\n').filter((l) => l.startsWith('+'))),
  };
}

const tsx = (args: string[], env: Record<string, string> = {}) =>
  execa('node', ['--import', 'tsx', ...args], { cwd: copy, env: { ...env, DISAGG_BIN: 'tsx' }, reject: false, all: true, timeout: 180_000 });

describe('docs/extending.md, followed to the letter', () => {
  it('its table says what its blocks take', () => {
    expect(page).toMatch(/\| a scheduler \| 1 file and 1 registration line \(with its import\) \|/);
    expect(page).toMatch(/\| a test type that is not a serving one \| 3 files \|/);
    expect(page).toMatch(/\| a launcher \| 1 file and 1 registration line \(with its import\) \|/);
    expect(page).toMatch(/\| a serving engine \| 1 table \(its file\) and 1 registration line \(with its import\) \|/);
    const launcher = cost('A launcher');
    expect(launcher.files).toEqual(['framework/scheduler/launch/mpiexec.ts', 'framework/scheduler/launch/launchers.ts']);
    expect(launcher.addedLines).toEqual(["+import { mpiexecLauncher } from './mpiexec.ts';", '+registerLauncher(mpiexecLauncher);']);
    const engine = cost('A serving engine');
    expect(engine.files).toEqual(['framework/types/serving/engines/standin.ts', 'framework/types/serving/engines/engines.ts']);
    expect(engine.addedLines).toEqual(["+import { standinEngine } from './standin.ts';", '+const engines: ServingEngine[] = [trtllmEngine, llamacppEngine, standinEngine];']);
    const scheduler = cost('A scheduler');
    expect(scheduler.files).toEqual(['framework/scheduler/echo.ts', 'framework/scheduler/schedulers.ts']);
    expect(scheduler.addedLines).toEqual(["+import { echoDefinition } from './echo.ts';", '+registerScheduler(echoDefinition);']);
    expect(cost('A test type').files).toHaveLength(3);
  });

  it('a scheduler: SCHEDULER=echo chooses it, it takes a job, and an unknown name lists it', { timeout: 200_000 }, async () => {
    const script = `
      const { createScheduler, schedulerProblem } = await import('./framework/scheduler/create.ts');
      const s = await createScheduler({ debugMode: false, scheduler: 'echo', outputPath: '${copy}/out' });
      const id = await s.submit({});
      console.log(s.name, id, (await s.poll([id])).get(id).state, s.capabilities.jobsOutliveRun);
      console.log(schedulerProblem({ SCHEDULER: 'ehco' }));`;
    const run = await tsx(['--input-type=module', '-e', script]);
    expect(run.exitCode, run.all).toBe(0);
    const [taken, refused] = run.stdout.split('\n');
    expect(taken).toBe('echo echo-1 COMPLETED false');
    // The registry's lists with the page's scheduler among them; it has no autoSelect, so the order without SCHEDULER stays.
    const [, names, unset] = /^SCHEDULER="ehco": expected (.*) \(the scheduler; unset: (.*)\)$/.exec(refused) ?? [];
    expect(names?.split(' or ').sort()).toEqual([...schedulerNames(), 'echo'].sort());
    expect(unset).toBe(autoSelectWords());
  });

  it('a launcher and a serving engine: a serving job of the stand-in engine, started with mpiexec', { timeout: 200_000 }, async () => {
    const script = `
      const { planServingJob } = await import('./framework/types/serving/job/job-plan.ts');
      const { jobArtefacts } = await import('./framework/types/serving/job/job-builder.ts');
      const config = {
        metadata: { model_name: 'm' }, slurm: { partition: 'debug', account: 'a', job_time: '00:10:00' },
        benchmark: { mode: 'e2e', concurrency_list: '2', input_length: 8, output_length: 4 },
        hardware: { gpus_per_node: 2, num_ctx_servers: 1, num_gen_servers: 1 },
        environment: { model_path: '/models/m' },
        worker_config: {
          gen: { tensor_parallel_size: 2, max_batch_size: 4, max_num_tokens: 64, max_seq_len: 64 },
          ctx: { tensor_parallel_size: 2, max_batch_size: 4, max_num_tokens: 64, max_seq_len: 64 },
        },
        launch: { engine: 'standin' },
      };
      const plan = planServingJob({ testId: 't', config, logDir: '/l', packageRoot: '/pkg', launcher: 'mpiexec' });
      const files = jobArtefacts(config, plan);
      const { validateConfig } = await import('./framework/config/validate.ts');
      const { parseYaml } = await import('./framework/config/load.ts');
      const { disaggType } = await import('./framework/types/disagg.ts');
      const full = { ...config, metadata: { model_name: 'm', precision: 'fp4', model_dir_name: 'M', supported_gpus: ['GB200'] }, benchmark: { ...config.benchmark, streaming: true } };
      const issues = (launch) => validateConfig(disaggType, parseYaml(JSON.stringify({ ...full, launch }), '/c.yaml'), 'c.yaml', '/c.yaml', 'perf').map((i) => i.path + ': ' + i.message);
      console.log(JSON.stringify([issues({ engine: 'standin' }), issues({ engine: 'vllm' }).length]));
      console.log(Object.keys(files).sort().join(' '));
      console.log(files['job.sh']);`;
    const run = await tsx(['--input-type=module', '-e', script]);
    expect(run.exitCode, run.all).toBe(0);
    const [validated, names, ...job] = run.stdout.split('\n');
    // The config validates with the stand-in engine; an engine no table names is refused.
    const [standinIssues, unknownIssues] = JSON.parse(validated);
    expect(standinIssues).toEqual([]);
    expect(unknownIssues).toBe(1);
    expect(names).toBe('allocations.json decode.yaml env_vars.json job.sh prefill.yaml router.json');
    const text = job.join('\n');
    expect(text).toMatch(/^start_server GEN_0 \/l\/server_GEN_0\.log mpiexec -n 2 -ppn 2 -hosts "\$\{GEN_0_NODES\}" env 'STANDIN_ROLE=decode' 'CUDA_VISIBLE_DEVICES=0,1' standin-serve \/models\/m --host "\$\{GEN_0_HOST\}" --port 9000 --options \/l\/decode\.yaml$/m);
    expect(text).toMatch(/^start_server ROUTER \/l\/router\.log mpiexec -n 1 -ppn 1 -hosts "\$\{ROUTER_NODE\}" standin-router --config \/l\/router\.json --timeout 600$/m);
    expect(text).toMatch(/^wait_for_health "\$\{ROUTER_URL\}\/ready" /m);
    expect(text).toMatch(/^ROUTER_URL="http:\/\/\$\{ROUTER_HOST\}:9100"$/m);
    expect(text).toMatch(/^run_step 'client c=2' \/l\/6_bench\.log mpiexec .* standin-bench --model \/models\/m --backend openai /m);
    expect(text).not.toMatch(/trtllm|\bsrun\b/);
  });

  it('a test type: its configs are listed and validated, each problem at its file and line', { timeout: 200_000 }, async () => {
    const work = path.join(copy, 'work');
    mkdirSync(path.join(work, 'test_configs/echo/perf'), { recursive: true });
    writeFileSync(path.join(work, 'test_configs/echo/perf/fast.yaml'), 'benchmark:\n  latency_ms: 1.5\n');
    writeFileSync(path.join(work, 'test_configs/echo/perf/broken.yaml'), 'benchmark:\n  latency_ms: -1\n');
    const env = { WORK_DIR: work, OUTPUT_PATH: path.join(copy, 'out'), SCHEDULER: 'local', PATH: process.env.PATH ?? '' };
    const list = await tsx(['bin/disagg-bench.js', 'list', '--type', 'echo'], env);
    expect(list.all).toContain('echo_perf_fast');
    const validate = await tsx(['bin/disagg-bench.js', 'validate'], env);
    expect(validate.exitCode, validate.all).toBe(1);
    expect(validate.stdout).toMatch(/test_configs\/echo\/perf\/broken\.yaml:2.*latency_ms/);
    expect(validate.stdout).not.toMatch(/fast\.yaml/);
  });
});
