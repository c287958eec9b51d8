// An example disagg-bench extension, kept as a package of its own: WORK_DIR/disagg-bench.yaml names
// it under `extensions:` (by path or, installed, by package name) and disagg-bench calls
// register(api) in every process that asks its registries. It imports nothing of disagg-bench.
//   - scheduler `subprocess`: each job script runs as a child process of the run, in a process
//     group of its own (cancelled: the group is killed); its jobs end with their run.
//   - launcher `fork-tasks`: a step's tasks forked on this host, told their rank with torchrun's
//     variables (bin/fork-tasks).
//   - extractor `ok-lines`: one metric, OK_LINES, the number of lines that read "ok".
//   - test type `shell-check`: a config under test_configs/shell-check/<category>/ names a command;
//     its job runs it, `ok-lines` counts its "ok" lines, and the test passes with at least min_ok.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const forkTasks = fileURLToPath(new URL('./bin/fork-tasks', import.meta.url));

const capabilities = {
  jobsOutliveRun: false, costlyPolls: false, pollFailureSpanMs: 0,
  arrays: false, gres: false, segment: false, requeue: false, nodeLists: false,
};

/** @param {object} api what disagg-bench gives: registerScheduler, registerLauncher, registerExtractor, SchedulerError, jobOutputFiles */
export function register(api) {
  class SubprocessScheduler {
    name = 'subprocess';
    capabilities = capabilities;
    jobs = new Map();
    next = 1;

    async submit(request) {
      const id = `sp${process.pid}-${this.next++}`;
      mkdirSync(request.logDir, { recursive: true });
      const files = api.jobOutputFiles(request.logDir, id);
      const [out, err] = [openSync(files.stdout, 'a'), openSync(files.stderr, 'a')];
      const child = spawn('bash', [request.scriptPath], {
        cwd: request.workDir, env: { ...process.env, ...request.env }, stdio: ['ignore', out, err], detached: true,
      });
      closeSync(out);
      closeSync(err);
      const job = { child, cancelled: false, status: { id, state: 'RUNNING', terminal: false, startTime: Date.now() } };
      child.on('exit', (code, signal) => {
        const state = job.cancelled ? 'CANCELLED' : code === 0 ? 'COMPLETED' : 'FAILED';
        job.status = { ...job.status, state, terminal: true, exitCode: code ?? 0, ...(signal ? { signal: constants.signals[signal] } : {}), endTime: Date.now() };
      });
      child.on('error', (error) => {
        job.status = { ...job.status, state: 'FAILED', terminal: true, reason: error.message, endTime: Date.now() };
      });
      this.jobs.set(id, job);
      return id;
    }

    async poll(ids) {
      return new Map(ids.filter((id) => this.jobs.has(id)).map((id) => [id, this.jobs.get(id).status]));
    }

    async cancel(ids) {
      const failed = this.cancelNow(ids);
      if (failed) throw new api.SchedulerError(failed, 'kill');
    }

    cancelNow(ids) {
      for (const id of ids) {
        const job = this.jobs.get(id);
        if (!job || job.status.terminal) continue;
        job.cancelled = true;
        try {
          process.kill(-job.child.pid, 'SIGKILL');
        } catch (error) {
          if (error.code !== 'ESRCH') return `kill of job ${id} failed: ${error.message}`;
        }
      }
      return undefined;
    }

    logs(id, request) {
      return api.jobOutputFiles(request.logDir, id);
    }

    async close() {
      this.cancelNow([...this.jobs.keys()]);
    }
  }

  api.registerScheduler({
    name: 'subprocess',
    description: 'an example extension: each job script a child process of the run',
    capabilities,
    launcher: 'fork-tasks',
    create: () => new SubprocessScheduler(),
  });

  api.registerLauncher({
    name: 'fork-tasks',
    description: "an example extension: the step's tasks forked on this host",
    startsTasks: true,
    containers: false,
    rankVariables: 'torchrun',
    prefix: (step) => [forkTasks, '--tasks', step.tasks],
  });

  api.registerExtractor('ok-lines', (text) => ({
    metrics: [{ name: 'OK_LINES', value: text.split('\n').filter((line) => line.trim() === 'ok').length, unit: 'count', labels: {} }],
    problems: [],
  }));

  api.registerTestType({
    name: 'shell-check',
    description: 'an example extension: a command whose "ok" lines are counted',
    schema: {
      type: 'object',
      required: ['benchmark'],
      additionalProperties: false,
      properties: {
        metadata: { type: 'object' },
        benchmark: {
          type: 'object',
          required: ['command'],
          additionalProperties: false,
          properties: {
            command: { type: 'array', minItems: 1, items: { type: 'string' } },
            min_ok: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    rules: () => [],
    envOverrides: [],
    supportedGpus: () => undefined,
    metrics: () => [{ logFile: 'check.log', extractor: 'ok-lines', names: ['OK_LINES'] }],
    async buildJob(ctx) {
      const quote = (word) => `'${word.replaceAll("'", "'\\''")}'`;
      const scriptPath = path.join(ctx.logDir, 'job.sh');
      const command = ctx.config.benchmark.command.map(quote).join(' ');
      await writeFile(scriptPath, `#!/usr/bin/env bash\n${command} >${quote(path.join(ctx.logDir, 'check.log'))}\n`, { mode: 0o755 });
      return { scriptPath, resources: { nodes: 1, ntasks: 1, timeLimitSec: 60 } };
    },
    verdict: ({ config, metrics, problems }) => {
      const ok = metrics.find((m) => m.name === 'OK_LINES')?.value ?? 0;
      const least = config.benchmark.min_ok ?? 1;
      const failures = [...problems, ...(ok < least ? [`${ok} "ok" line(s), fewer than min_ok ${least}`] : [])];
      return { passed: failures.length === 0, failures };
    },
  });
}
