// Safety: values from configs, file names and the environment never reach a shell unquoted (a real
// run on the local SLURM cluster with hostile values: each travels as one argument and stays
// inert, and every generated job script passes `bash -n`); CSV cells that a spreadsheet would
// take for formulas are escaped; secret-looking variables are written nowhere by the framework.
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { clusterEnv, describeCluster } from '../setup/cluster.ts';
import { recordOf, repoRoot, runSuite, standinConfig, testIdOf, writeWorkDir, removeWorkDirs } from '../fixtures/reliability/suite-run.ts';
import { readCsv } from '../fixtures/reliability/csv-read.ts';
import { appendPerfRows, PERF_CSV_COLUMNS, perfRowsFor } from '../../framework/results/csv.ts';
import { LocalScheduler } from '../../framework/scheduler/local.ts';
import { isSecretName, redactEnv, redactSecrets, REDACTED } from '../../framework/secrets.ts';

afterAll(removeWorkDirs);

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

const marker = () => path.join(mkdtempSync(path.join(tmpdir(), 'pwned-')), `PWNED-${process.pid}-${Date.now()}`);

describeCluster.concurrent('hostile values on the real cluster', () => {
  it('a hostile file name, job name, partition and env values each travel as one argument and stay inert', { timeout: 180_000 }, async () => {
    const mark = marker();
    const inject = `$(touch ${mark}); \`touch ${mark}\`; touch ${mark}`;
    const evilStem = `evil name 'single' "double" $(touch ${path.basename(mark)}) ; x`;
    // WORK_DIR and OUTPUT_PATH themselves hold spaces, quotes and a command substitution.
    const { workDir, outputPath } = writeWorkDir({
      [evilStem]: await standinConfig({
        client: 'ok',
        patch: {
          slurm: { job_name: `x"; ${inject}; echo "` },
          environment: { model_path: '/models/standin', worker_env_var: `EVIL='${inject}' OTHER="a b"`, server_env_var: `EVIL2=${inject.replace(/ /g, '')}` },
          benchmark: { env_var: { EVIL3: inject } },
        },
      }),
      bad_partition: await standinConfig({ client: 'ok', partition: `debug; ${inject}` }),
    }, `hostile it's "dir" $(touch ${path.basename(mark)}) -`);
    const { records, output } = await runSuite({ workDir, outputPath, scheduler: 'slurm', env: { ...clusterEnv(), EVIL_ENV: inject } });
    expect(existsSync(mark), `${mark} was created: a value reached a shell`).toBe(false);
    for (const dir of [repoRoot, workDir, path.dirname(workDir), outputPath, tmpdir()]) {
      expect(existsSync(path.join(dir, path.basename(mark))), `${path.basename(mark)} was created in ${dir}`).toBe(false);
    }

    // The hostile file name is the test id, the sbatch job name and a folder name: all literal.
    const evil = recordOf(records, testIdOf(evilStem))!;
    expect(evil, output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
    const jobName = (await execa('squeue', ['-h', '-t', 'all', '-j', evil.jobId!, '-o', '%j'], { env: clusterEnv() })).stdout.trim();
    expect(jobName).toBe(testIdOf(evilStem).slice(0, jobName.length)); // squeue may shorten it, never alter it
    const info = readFileSync(path.join(evil.logDir!, 'job_info.txt'), 'utf8');
    expect(info).toContain(`job_name: x"; ${inject}; echo "`);
    const envVars = JSON.parse(readFileSync(path.join(evil.logDir!, 'env_vars.json'), 'utf8'));
    expect(envVars.GEN_0.EVIL).toBe(inject);
    expect(envVars.GEN_0.OTHER).toBe('a b');

    // The partition reached sbatch as one argument, and sbatch said so.
    const refused = recordOf(records, testIdOf('bad_partition'))!.failures.join('\n');
    expect(refused).toContain(`'--partition=debug; ${inject.replace(/'/g, `'\\''`)}'`);
    expect(refused).toContain(`invalid partition specified: debug; ${inject}`);

    // Every job script this run generated passes bash -n.
    for (const script of filesUnder(path.join(outputPath, 'slurm_logs')).filter((f) => f.endsWith('/job.sh'))) {
      const check = await execa('bash', ['-n', script], { reject: false });
      expect(check.exitCode, `${script}: ${check.stderr}`).toBe(0);
    }
  });

  it('a hostile value in a variable the job script reads is refused by the script, not run', { timeout: 120_000 }, async () => {
    const mark = marker();
    const { workDir, outputPath } = writeWorkDir({ job: await standinConfig({ client: 'ok' }) }, 'hostile-env-');
    const { records, output } = await runSuite({
      workDir, outputPath, scheduler: 'slurm', env: { ...clusterEnv(), DISAGG_HEALTH_TIMEOUT: `1; touch ${mark}`, DISAGG_HEALTH_INTERVAL: `$(touch ${mark})` },
    });
    expect(existsSync(mark)).toBe(false);
    const failures = recordOf(records, testIdOf('job'))!.failures.join('\n');
    expect(failures, output).toMatch(/ended FAILED \(exit code 2[\s\S]*DISAGG_HEALTH_TIMEOUT\/DISAGG_HEALTH_INTERVAL must be whole seconds/);
  });
});

describe('CSV cells a spreadsheet would run as formulas', () => {
  it('text starting with = + - @ (and tab, CR) is escaped; numbers stay numbers', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'csv-formulas-'));
    const timing = { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-01T00:01:00Z'), durationSec: 60 };
    const metric = (name: string, value: number, labels: Record<string, string | number> = {}) => ({ name, value, unit: 'ms', higherIsBetter: false, labels });
    const rows = perfRowsFor(
      { name: '=HYPERLINK("http://x","y")', model: '+cmd|calc', precision: '@SUM(1)' },
      [metric('-2+3', -5), metric('@A1', 1.5, { tag: '=1+1' }), metric('\tTAB', 2), metric('\rCR', 3)],
      timing,
    );
    const file = await appendPerfRows(dir, rows);
    const cells = readCsv(readFileSync(file, 'utf8'));
    expect(cells).toHaveLength(4);
    for (const row of cells) {
      for (const column of PERF_CSV_COLUMNS) {
        if (column === 'perf_metric') continue;
        expect(row[column], `${column}: ${row[column]}`).not.toMatch(/^[=+\-@\t\r]/);
      }
    }
    expect(cells[0].network_name).toBe(`'=HYPERLINK("http://x","y")`);
    expect(cells[0].metric_type).toBe(`'-2+3`);
    expect(cells[1].metric_type).toBe(`'@A1`);
    expect(cells[1].network_name).toBe(`'=HYPERLINK("http://x","y")_tag:=1+1`);
    expect(cells[2].metric_type).toBe(`'\tTAB`);
    // A negative number is a value, not a formula: kept as the number (a float, as pandas writes it).
    expect(cells[0].perf_metric).toBe('-5.0');
  });
});

describe('secret-looking variables', () => {
  it('are recognised by name (TOKEN, KEY, SECRET, PASSWORD), and config settings that only look alike are not', () => {
    for (const name of ['HF_TOKEN', 'GITHUB_TOKEN', 'WANDB_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'hf_token']) expect(isSecretName(name), name).toBe(true);
    for (const name of ['MODEL_DIR', 'SLURM_PARTITION', 'CUDA_VISIBLE_DEVICES']) expect(isSecretName(name), name).toBe(false);
    expect(redactEnv({ HF_TOKEN: 'x', PATH: '/bin' })).toEqual({ HF_TOKEN: REDACTED, PATH: '/bin' });
    const config = {
      worker_config: { gen: { max_num_tokens: 32, cache_transceiver_config: { max_tokens_in_buffer: 4608 } } },
      environment: { worker_env_var: `A=1 HF_TOKEN=hf_abc DB_PASSWORD="p w" B=2`, server_env_var: 'max_tokens=5' },
      accuracy: { env_var: { HF_HOME: '/hf', OPENAI_API_KEY: 'sk-1' } },
    };
    expect(redactSecrets(config)).toEqual({
      worker_config: { gen: { max_num_tokens: 32, cache_transceiver_config: { max_tokens_in_buffer: 4608 } } },
      environment: { worker_env_var: `A=1 HF_TOKEN=${REDACTED} DB_PASSWORD=${REDACTED} B=2`, server_env_var: 'max_tokens=5' },
      accuracy: { env_var: { HF_HOME: '/hf', OPENAI_API_KEY: REDACTED } },
    });
  });

  it('the local scheduler gives a job its secret variables but writes them into no record', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'local-secret-'));
    const scheduler = new LocalScheduler({ stateDir: path.join(dir, 'state'), cpus: 1 });
    const script = path.join(dir, 'job.sh');
    // The script checks the value without naming it (its text must not hold the secret either).
    writeFileSync(script, '#!/bin/bash\n[ "$(printf %s "$HF_TOKEN" | rev)" = eulav-t3rc3s ] && echo got-it\n', { mode: 0o755 });
    const request = { name: 'secret', scriptPath: script, logDir: path.join(dir, 'logs'), workDir: dir, resources: { nodes: 1, ntasks: 1, timeLimitSec: 30 }, env: { HF_TOKEN: 's3cr3t-value' } };
    const id = await scheduler.submit(request);
    // Until the job has ended, however long that takes here (the test's timeout bounds it).
    while (!(await scheduler.poll([id])).get(id)?.terminal) await new Promise((r) => setTimeout(r, 50));
    await scheduler.close();
    expect(readFileSync(scheduler.logs(id, request).stdout, 'utf8')).toBe('got-it\n');
    for (const file of filesUnder(dir)) expect(readFileSync(file, 'utf8'), file).not.toContain('s3cr3t-value');
    const record = JSON.parse(readFileSync(path.join(scheduler.stateDir, id, 'local-job.json'), 'utf8'));
    expect(record.request.env).toEqual({ HF_TOKEN: REDACTED });
  });
});

describeCluster.concurrent('secrets in a real run', () => {
  // Values only: a secret in the environment must appear in no file the run leaves behind.
  const secrets = { HF_TOKEN: 'hf-9f8e7d6c5b4a', WANDB_API_KEY: 'wandb-1a2b3c4d5e', DB_PASSWORD: 'pw-5e4d3c2b1a', AWS_SECRET_ACCESS_KEY: 'aws-0a1b2c3d4e' };
  const configSecret = 'cfg-token-77a1b2c3';

  for (const scheduler of ['slurm', 'local'] as const) {
    it(`on ${scheduler}: environment secrets reach no file; a config's secret is redacted in what the framework writes`, { timeout: 120_000 }, async () => {
      const { workDir, outputPath } = writeWorkDir({
        job: await standinConfig({ client: 'ok', patch: { environment: { model_path: '/models/standin', worker_env_var: `HF_TOKEN=${configSecret} LEVEL=INFO` } } }),
      }, `secrets-${scheduler}-`);
      const env = scheduler === 'slurm' ? { ...clusterEnv(), ...secrets } : secrets;
      const { records, output } = await runSuite({ workDir, outputPath, scheduler, env });
      expect(recordOf(records, testIdOf('job')), output).toMatchObject({ verdict: 'passed' });
      const files = filesUnder(outputPath);
      expect(files.some((f) => f.endsWith('/ledger.jsonl'))).toBe(true);
      for (const file of files) {
        const text = readFileSync(file, 'latin1');
        for (const value of Object.values(secrets)) expect(text.includes(value), `${value} in ${file}`).toBe(false);
      }
      // A config's secret: redacted in the framework's copies of the config, absent from job.sh and
      // env_vars.json (the job gets it through the scheduler's environment), and in no other file.
      const logDir = path.join(outputPath, 'slurm_logs', testIdOf('job'));
      expect(readFileSync(path.join(logDir, 'resolved_config.yaml'), 'utf8')).toContain(`HF_TOKEN=${REDACTED} LEVEL=INFO`);
      expect(readFileSync(path.join(logDir, 'job.sh'), 'utf8')).toContain(`'HF_TOKEN='"\${HF_TOKEN}"`);
      expect(JSON.parse(readFileSync(path.join(logDir, 'env_vars.json'), 'utf8')).GEN_0).toMatchObject({ HF_TOKEN: REDACTED, LEVEL: 'INFO' });
      for (const file of files) expect(readFileSync(file, 'latin1').includes(configSecret), `config secret in ${file}`).toBe(false);
    });
  }
});
