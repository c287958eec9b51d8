// Orchestration overhead on the real local SLURM cluster: N short jobs in batches
// through the framework (`npx vitest run --project disagg` as a child process, SCHEDULER=slurm),
// against a plain shell loop that submits the same jobs in the same batches and polls squeue every
// 0.1 s (bench/orchestration-baseline.sh), in the same run. Each job is `sleep` (bench/fixtures/
// sleep-job.yaml). Reports wall times and their ratio, completion-detection latency (against the
// controller's own millisecond record of the job's completion, and against the job's last
// timestamp), and the SLURM commands the framework issued (wrappers first on its PATH).
// Command line: USAGE below (--help prints it).
// The GPU type is H100: one whose sbatch arguments the local SLURM takes (GB200's carry
// --segment, which SLURM before 24.11 refuses).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../framework/settings.ts';
import { readLedger } from '../framework/jobs/ledger.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { maxOf, minOf, percentile, summary } from './lib/stats.ts';
import { busyNodes, ctldJobTimes, listedJobs, useLocalCluster, type CtldJobTimes } from './lib/local-cluster.ts';
import { checkStatusCycles, readCallLog, writeCallLoggingWrappers, type SlurmCall } from './lib/slurm-call-log.ts';
import { startHealthStandIn } from './lib/health-standin.ts';
import { outputTail, timedCommand, type TimedRun } from './lib/timed-command.ts';
import { sleepJobConfig, workEnd, writeBaselineJobs, writeSleepConfigs, type SleepJob } from './lib/sleep-jobs.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/orchestration.ts [--jobs 40] [--batch 10] [--sleep 5] [--poll 0.1]
    [--order baseline-first|framework-first] [--poll-max SEC] [--keep] [--smoke]
  --jobs N jobs of \`sleep --sleep\` seconds in batches of --batch, through the framework and through
  the shell loop polling squeue every --poll seconds; --poll-max: DISAGG_POLL_MAX_SEC of the
  framework's run (default unset); --order: which run goes first; --keep: leave the scratch folder.
  --smoke: 2 jobs of \`sleep 1\` in one batch, that it still runs, in seconds; no figure kept.`;

const cli = benchOptions({ args: benchArgs(['--jobs', '2', '--batch', '2', '--sleep', '1']),
  options: {
    jobs: { type: 'string', default: '40' },
    batch: { type: 'string', default: '10' },
    sleep: { type: 'string', default: '5' },
    poll: { type: 'string', default: '0.1' },
    keep: { type: 'boolean', default: false },
    /** DISAGG_POLL_MAX_SEC for the framework run (its cap of the poll interval); default: unset. */
    'poll-max': { type: 'string' },
    /** Which run goes first (alternate between runs: the cluster and the machine drift). */
    order: { type: 'string', default: 'baseline-first' },
  },
}, USAGE);
const { values } = cli;
const order = cli.oneOf('order', ['baseline-first', 'framework-first']);
const jobCount = cli.wholeNumber('jobs');
const batchSize = cli.wholeNumber('batch');
const sleepSec = cli.number('sleep');
const pollSec = cli.number('poll', { above: 0 });
const pollMaxSec = values['poll-max'] === undefined ? undefined : cli.number('poll-max', { above: 0 });
const GPU_TYPE = 'H100';

/** One job of one run, times in epoch seconds. */
interface JobTiming {
  test: string;
  job: string;
  batch: number;
  submitted: number;
  noticed: number;
  state: string;
  workEnd?: number;
  ctld: CtldJobTimes;
}

interface RunResult {
  name: string;
  run: TimedRun;
  jobs: JobTiming[];
}

/** The environment of both runs: the caller's, minus anything that changes what the framework does. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(DISAGG_|DEBUG_MODE$|DEBUG_JOB_ID$|RESUME$|SCHEDULER$|GPU_TYPE$|WORK_DIR$|OUTPUT_PATH$|SLURM_)/.test(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

async function runBaseline(jobs: SleepJob[], dir: string, common: NodeJS.ProcessEnv): Promise<RunResult> {
  const outputPath = path.join(dir, 'baseline-out');
  const argsFiles = await writeBaselineJobs(jobs, { outputPath, workDir: path.join(dir, 'work'), packageRoot, gpuType: GPU_TYPE, env: common });
  const events = path.join(dir, 'baseline-events.txt');
  const script = path.join(packageRoot, 'bench', 'orchestration-baseline.sh');
  const run = await timedCommand('bash', [script, String(batchSize), String(pollSec), events, ...argsFiles], { env: common, cwd: dir });
  if (run.exitCode !== 0) throw new Error(`baseline loop failed (exit ${run.exitCode}):\n${outputTail(run.output)}`);
  const submitted = new Map<string, number>();
  const ended = new Map<string, number>();
  for (const line of readFileSync(events, 'utf8').split('\n')) {
    const [what, id, t] = line.split(' ');
    if (what === 'submitted') submitted.set(id, Number(t));
    if (what === 'ended') ended.set(id, Number(t));
  }
  const ids = [...submitted.keys()]; // in submission order = test order
  return {
    name: 'baseline',
    run,
    jobs: ids.map((job, i) => ({
      test: jobs[i].id, job, batch: Math.floor(i / batchSize), submitted: submitted.get(job)!, noticed: ended.get(job)!,
      state: 'ENDED', workEnd: workEnd(outputPath, jobs[i].id), ctld: {},
    })),
  };
}

async function runFramework(jobs: SleepJob[], dir: string, common: NodeJS.ProcessEnv, callLog: string): Promise<RunResult> {
  const outputPath = path.join(dir, 'framework-out');
  const wrappers = writeCallLoggingWrappers(path.join(dir, 'wrappers'), callLog);
  const env = {
    ...common, PATH: `${wrappers}:${common.PATH}`, SCHEDULER: 'slurm', OUTPUT_PATH: outputPath,
    ...(pollMaxSec !== undefined && { DISAGG_POLL_MAX_SEC: String(pollMaxSec) }),
  };
  const run = await timedCommand('npx', ['vitest', 'run', '--project', 'disagg'], { env, cwd: packageRoot, timeoutMs: 30 * 60_000 });
  if (run.exitCode !== 0) throw new Error(`the framework run failed (exit ${run.exitCode}):\n${outputTail(run.output)}`);
  const ledger = readLedger(outputPath);
  const timings: JobTiming[] = [];
  for (const [i, job] of jobs.entries()) {
    const entries = ledger.filter((e) => e.test === job.id);
    const sub = entries.find((e) => e.state === 'SUBMITTED');
    const end = entries.find((e) => e.terminal);
    if (!sub || !end) throw new Error(`${job.id}: the ledger has no ${sub ? 'terminal' : 'SUBMITTED'} entry (${outputPath}/ledger.jsonl)`);
    timings.push({
      test: job.id, job: sub.job, batch: sub.batch ?? Math.floor(i / batchSize), submitted: Date.parse(sub.time) / 1000,
      noticed: Date.parse(end.time) / 1000, state: end.state, workEnd: workEnd(outputPath, job.id), ctld: {},
    });
  }
  return { name: 'framework', run, jobs: timings };
}

/** The framework's fixed start-up cost: `vitest list` of the same configs (plans, submits nothing). */
async function listOnly(env: NodeJS.ProcessEnv): Promise<number> {
  const run = await timedCommand('npx', ['vitest', 'list', '--project', 'disagg'], { env, cwd: packageRoot });
  const listed = run.output.split('\n').filter((l) => /disagg_perf_sleep_/.test(l)).length;
  if (run.exitCode !== 0 || listed !== jobCount) throw new Error(`vitest list printed ${listed} of ${jobCount} ids (exit ${run.exitCode}):\n${outputTail(run.output)}`);
  return run.wallS;
}

/** Figures of one run. */
function figures(r: RunResult, ctld: Map<string, CtldJobTimes>) {
  for (const j of r.jobs) j.ctld = ctld.get(j.job) ?? {};
  const missing = r.jobs.filter((j) => j.ctld.completed === undefined).map((j) => j.job);
  if (missing.length) throw new Error(`${r.name}: the controller's log has no completion of job(s) ${missing.join(' ')}`);
  const vsSlurm = r.jobs.map((j) => j.noticed - j.ctld.completed! / 1000);
  const vsWork = r.jobs.filter((j) => j.workEnd !== undefined).map((j) => j.noticed - j.workEnd!);
  const batches = [...new Set(r.jobs.map((j) => j.batch))].sort((a, b) => a - b);
  const inBatch = (b: number) => r.jobs.filter((j) => j.batch === b);
  // From the last end noticed in batch k to the first submission of batch k+1 (one sbatch included).
  const handover = batches.slice(1).map((b) => minOf(inBatch(b).map((j) => j.submitted)) - maxOf(inBatch(b - 1).map((j) => j.noticed)));
  // Per batch, from the first job submitted to the last (submissions go one after the other).
  const spread = batches.map((b) => maxOf(inBatch(b).map((j) => j.submitted)) - minOf(inBatch(b).map((j) => j.submitted)));
  // Per batch, the longest job as SLURM ran it (started -> completed).
  const longest = batches.map((b) => maxOf(inBatch(b).map((j) => (j.ctld.completed! - j.ctld.started!) / 1000)));
  const firstSubmit = minOf(r.jobs.map((j) => j.submitted));
  const lastNoticed = maxOf(r.jobs.map((j) => j.noticed));
  return {
    wallS: r.run.wallS,
    beforeFirstSubmitS: firstSubmit - r.run.start,
    firstSubmitToLastNoticedS: lastNoticed - firstSubmit,
    afterLastNoticedS: r.run.end - lastNoticed,
    handoverS: handover,
    submitSpreadS: spread,
    longestJobPerBatchS: longest,
    queueWaitS: summary(r.jobs.map((j) => (j.ctld.started! - j.ctld.submitted!) / 1000)),
    detectVsSlurmS: summary(vsSlurm),
    detectVsWorkEndS: vsWork.length ? summary(vsWork) : undefined,
    states: [...new Set(r.jobs.map((j) => j.state))],
  };
}

function callCounts(calls: SlurmCall[], wallS: number) {
  const count = (p: SlurmCall['purpose']) => calls.filter((c) => c.purpose === p).length;
  const p50Duration = (p: SlurmCall['purpose']) => {
    const durations = calls.filter((c) => c.purpose === p).map((c) => c.end - c.start);
    return durations.length ? Number(percentile(durations, 50).toFixed(3)) : 0;
  };
  const status = count('status') + count('status-fallback');
  return {
    submit: count('submit'), status, statusFallback: count('status-fallback'), probe: count('probe'), cancel: count('cancel'),
    statusPerMinute: Number(((status / wallS) * 60).toFixed(1)),
    sbatchDurationP50S: p50Duration('submit'),
    statusDurationP50S: p50Duration('status'),
  };
}

async function main(): Promise<void> {
  const cluster = await useLocalCluster(packageRoot);
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-orchestration-'));
  const health = await startHealthStandIn();
  try {
    const sick = await busyNodes(cluster.conf);
    const othersAtStart = await listedJobs(cluster.conf);
    if (sick.length || othersAtStart.length) console.warn(`warning: the cluster is not quiet: nodes ${sick.join(', ') || 'idle'}; jobs: ${othersAtStart.join('; ') || 'none'}`);
    const jobs = writeSleepConfigs(path.join(dir, 'work'), jobCount, sleepJobConfig(health.port, sleepSec));
    const common = cleanEnv({ SLURM_CONF: cluster.conf, GPU_TYPE, WORK_DIR: path.join(dir, 'work'), DISAGG_BATCH_SIZE: String(batchSize) });
    const since = Date.now() - 1000;
    console.log(`${jobCount} jobs of \`sleep ${sleepSec}\`, batches of ${batchSize}, ${order} (scratch: ${dir})`);
    const callLog = path.join(dir, 'slurm-calls.tsv');
    const runBase = async () => {
      const r = await runBaseline(jobs, dir, common);
      console.log(`baseline: ${r.run.wallS.toFixed(2)} s`);
      return r;
    };
    const runFw = async () => {
      const r = await runFramework(jobs, dir, common, callLog);
      console.log(`framework: ${r.run.wallS.toFixed(2)} s`);
      return r;
    };
    const framework = order === 'framework-first' ? await runFw() : undefined;
    const baseline = await runBase();
    const frameworkRun = framework ?? (await runFw());
    const listS = await listOnly({ ...common, SCHEDULER: 'slurm', OUTPUT_PATH: path.join(dir, 'list-out') });
    const ctld = ctldJobTimes(cluster.ctldLog, since);
    const ours = new Set([...baseline.jobs, ...frameworkRun.jobs].map((j) => j.job));
    const foreign = [...ctld.keys()].filter((id) => !ours.has(id));
    report(frameworkRun, baseline, ctld, readCallLog(callLog), listS, { foreign, sick, othersAtStart });
  } finally {
    await health.close();
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    await cluster.release();
  }
}

function report(
  fwRun: RunResult, baseRun: RunResult, ctld: Map<string, CtldJobTimes>, calls: SlurmCall[], listS: number,
  cluster: { foreign: string[]; sick: string[]; othersAtStart: string[] },
): void {
  const fw = figures(fwRun, ctld);
  const base = figures(baseRun, ctld);
  const batches = Math.ceil(jobCount / batchSize);
  const idealNominal = batches * sleepSec;
  const idealMeasured = fw.longestJobPerBatchS.reduce((a, b) => a + b, 0);
  const counts = callCounts(calls, fw.wallS);
  const cycles = checkStatusCycles(calls);
  const s = (x: number) => x.toFixed(2);
  const pp = (x: { p50: number; p99: number }) => `${s(x.p50)} / ${s(x.p99)}`;
  printTable(
    `Orchestration: ${jobCount} jobs of \`sleep ${sleepSec}\`, DISAGG_BATCH_SIZE=${batchSize}, local SLURM cluster (seconds)`,
    ['', 'framework', 'baseline'],
    [
      ['wall time', s(fw.wallS), s(base.wallS)],
      ['  start -> first submission', s(fw.beforeFirstSubmitS), s(base.beforeFirstSubmitS)],
      ['    (`vitest list` of the same configs, for scale)', s(listS), ''],
      ['  first submission -> last end noticed', s(fw.firstSubmitToLastNoticedS), s(base.firstSubmitToLastNoticedS)],
      ['  last end noticed -> exit', s(fw.afterLastNoticedS), s(base.afterLastNoticedS)],
      ['batch hand-over (last end noticed -> next submitted), max', s(maxOf(fw.handoverS)), s(maxOf(base.handoverS))],
      ['batch submission (first -> last job submitted), per batch', fw.submitSpreadS.map(s).join(' '), base.submitSpreadS.map(s).join(' ')],
      ['detection after SLURM completion p50 / p99', pp(fw.detectVsSlurmS), pp(base.detectVsSlurmS)],
      ['detection after the job\'s last timestamp p50 / p99', fw.detectVsWorkEndS ? pp(fw.detectVsWorkEndS) : 'n/a', base.detectVsWorkEndS ? pp(base.detectVsWorkEndS) : 'n/a'],
      ['queue wait (submitted -> started) p50', s(fw.queueWaitS.p50), s(base.queueWaitS.p50)],
      ['longest job per batch (SLURM start -> end)', fw.longestJobPerBatchS.map(s).join(' '), base.longestJobPerBatchS.map(s).join(' ')],
    ],
  );
  console.log(`\nratio framework / baseline: ${(fw.wallS / base.wallS).toFixed(3)}`);
  console.log(`ideal (per batch, the longest job): nominal ${batches} x ${sleepSec} s = ${idealNominal} s -> framework / ideal ${(fw.wallS / idealNominal).toFixed(3)}; ` +
    `as SLURM ran them ${s(idealMeasured)} s -> ${(fw.wallS / idealMeasured).toFixed(3)}`);
  console.log(`framework SLURM commands: ${counts.submit} sbatch, ${counts.status} status (${counts.statusFallback} fallback), ${counts.probe} probe, ${counts.cancel} scancel; ` +
    `${counts.statusPerMinute} status commands per minute; one sbatch p50 ${counts.sbatchDurationP50S} s, one status command p50 ${counts.statusDurationP50S} s`);
  console.log(`status cycles: ${cycles.cycles}, commands per cycle ${cycles.commandsPerCycle}, overlapping ${cycles.overlapping}, ` +
    `min gap ${cycles.minGapS} s, most jobs in one command ${cycles.maxJobsPerCommand}`);
  if (cluster.foreign.length) console.log(`note: ${cluster.foreign.length} other job(s) ran on the cluster meanwhile: ${cluster.foreign.join(' ')}`);
  const goals: Goal[] = [
    { what: 'wall time framework / baseline', value: Number((fw.wallS / base.wallS).toFixed(3)), limit: 1.1, atMost: true },
    { what: 'completion detection p50 (after SLURM completion)', value: fw.detectVsSlurmS.p50, limit: 1, atMost: true, unit: ' s' },
    { what: 'status commands per poll cycle', value: cycles.commandsPerCycle, limit: 1, atMost: true },
  ];
  const met = printGoals(goals);
  appendResult('orchestration', {
    jobs: jobCount, batchSize, sleepSec, pollSec, order,
    frameworkPollMaxSec: pollMaxSec ?? 'default',
    framework: { ...fw, vitestListS: Number(listS.toFixed(3)) }, baseline: base, ratio: Number((fw.wallS / base.wallS).toFixed(3)),
    ideal: { nominalS: idealNominal, measuredS: Number(idealMeasured.toFixed(3)), frameworkOverNominal: Number((fw.wallS / idealNominal).toFixed(3)), frameworkOverMeasured: Number((fw.wallS / idealMeasured).toFixed(3)) },
    slurmCommands: counts, statusCycles: cycles,
    cluster: { foreignJobs: cluster.foreign.length, nodesNotIdleAtStart: cluster.sick, jobsAtStart: cluster.othersAtStart.length },
    allGoalsMet: met,
  }, goals);
}

await main();
