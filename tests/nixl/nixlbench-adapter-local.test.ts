// The nixlbench adapter's job on the local scheduler, with the REAL etcd server and the STAND-IN
// nixlbench: the private etcd started before the ranks and stopped after them (also when the tool
// is missing), registration in start order, the namespace of an external etcd wiped (stale keys
// of an "earlier run" would make the tool fail), artefacts, test-report.txt, metrics, verdict.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LocalScheduler } from '../../framework/scheduler/local.ts';
import { etcdctl, startEtcd, stopEtcd, type RunningEtcd } from '../../runners/nixl/etcd.ts';
import { nixlbenchConfig, removeToolJobFolders, runToolJob, standin } from './nixlbench-job-run.ts';

const stateDir = mkdtempSync(path.join(tmpdir(), 'nixl-adapter-state-'));
const scheduler = new LocalScheduler({ stateDir });
afterAll(async () => {
  await scheduler.close();
  removeToolJobFolders();
  rmSync(stateDir, { recursive: true, force: true });
});

/** etcd processes still running on a folder of this job (zombies have no command line). */
function etcdsOf(logDir: string): string[] {
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
  return ps.filter((line) => line.includes('etcd') && line.includes(logDir));
}

describe('nixlbench adapter on the local scheduler (real etcd, STAND-IN nixlbench)', { concurrent: true }, () => {
  test('private etcd: up before the ranks, registration in task order, down and cleaned after', { timeout: 120_000 }, async () => {
    const job = await runToolJob(scheduler, 'nixlbench_private', nixlbenchConfig({}));
    expect(job.status.state, job.out).toBe('COMPLETED');
    expect(job.out).toMatch(/nixl-tool: etcd http:\/\/127\.0\.0\.1:\d+ \(pid \d+, folder .*\/etcd\); namespace xferbench\/disagg-nixlbench_private\/ wiped \(0 key\(s\)\)/);
    // task 0 registered first, so it is nixlbench's rank 0 and printed the table
    expect(job.read('nixlbench-task0.log')).toMatch(/Registered as rank 0 item 1 of 2[\s\S]*Block Size \(B\)/);
    expect(job.read('nixlbench-task1.log')).toContain('Registered as rank 1 item 2 of 2');
    expect(job.read('nixlbench.log')).toMatch(/task 1 starts after 1 registration\(s\) under xferbench\/disagg-nixlbench_private\/\/size/);
    const command = JSON.parse(job.read('nixl-tool-spec.json')).commands[0];
    expect(command).toEqual([standin, '--etcd_endpoints', '{etcd}', '--benchmark_group', 'disagg-nixlbench_private', '--backend', 'UCX', '--max_block_size=262144']);
    expect(job.extracted.problems).toEqual([]);
    expect(job.extracted.metrics.filter((m) => m.name === 'BW_GBPS').map((m) => m.labels.block_size)).toEqual([4096, 8192, 16384, 32768, 65536, 131072, 262144]);
    expect(job.verdictFailures).toEqual([]);
    // after the job: the etcd stopped, its data removed, its log and the report kept
    expect(etcdsOf(job.logDir)).toEqual([]);
    expect(existsSync(path.join(job.logDir, 'etcd/data'))).toBe(false);
    expect(job.read('etcd/etcd.log')).toMatch(/ready to serve client requests|serving insecure client requests/);
    expect(job.read('test-report.txt')).toMatch(/etcd: private http:\/\/127\.0\.0\.1:\d+[\s\S]*task 0: exit code 0[\s\S]*task 1: exit code 0/);
    for (const probe of ['fi_info', 'gpu-info', 'efa-devices']) expect(job.read(`${probe}-${scheduler.nodeName}.txt`)).toMatch(/^\$ /);
  });

  test('start_order [1, 0]: task 1 registers first and becomes nixlbench rank 0', { timeout: 120_000 }, async () => {
    const job = await runToolJob(scheduler, 'nixlbench_order', nixlbenchConfig({ start_order: [1, 0], options: { standin_format: 'older' } }));
    expect(job.status.state, job.out).toBe('COMPLETED');
    expect(job.read('nixlbench-task1.log')).toMatch(/Registered as rank 0[\s\S]*B\/W \(MiB\/Sec\)/);
    expect(job.read('nixlbench-task0.log')).toContain('Registered as rank 1');
    // the older table format read as well
    expect(job.extracted.metrics.some((m) => m.name === 'BW_MIBPS')).toBe(true);
    expect(job.verdictFailures).toEqual([]);
  });

  test('a tool that is not installed fails the job, and the etcd is stopped all the same', { timeout: 120_000 }, async () => {
    const job = await runToolJob(scheduler, 'nixlbench_missing', nixlbenchConfig({ path: '/nonexistent/nixlbench' }));
    expect(job.status.state).toBe('FAILED');
    expect(job.read('nixlbench.log')).toContain('nixl-tool: /nonexistent/nixlbench: not found');
    expect(job.read('test-report.txt')).toMatch(/task 0: exit code 127/);
    expect(etcdsOf(job.logDir)).toEqual([]);
    expect(existsSync(path.join(job.logDir, 'etcd/data'))).toBe(false);
  });

  describe('an external etcd with keys of an earlier run', () => {
    let shared: RunningEtcd;
    const folder = mkdtempSync(path.join(tmpdir(), 'nixl-shared-etcd-'));
    beforeAll(async () => {
      shared = await startEtcd({ dir: path.join(folder, 'etcd') });
      // a finished 2-rank run left this (nixlbench's spelling: a second slash after the namespace)
      await etcdctl(shared.endpoint, ['put', 'xferbench/shared-group//size', '2']);
      await etcdctl(shared.endpoint, ['put', 'someone-else/key', 'keep']);
    });
    afterAll(async () => {
      await stopEtcd(shared.dir);
      rmSync(folder, { recursive: true, force: true });
    });

    test('stale keys break the tool; the adapter wipes the job namespace first and leaves others alone', { timeout: 120_000 }, async () => {
      // what the stale key does to a run that does not wipe it first
      const unwiped = await execa(standin, ['--etcd_endpoints', shared.endpoint, '--benchmark_group', 'shared-group'], { reject: false, all: true });
      expect(unwiped.exitCode).toBe(1);
      expect(unwiped.all).toContain('Rank 2 is greater than or equal to global size 2');
      await etcdctl(shared.endpoint, ['put', 'xferbench/shared-group//size', '2']);

      const job = await runToolJob(scheduler, 'nixlbench_external', nixlbenchConfig({ etcd: shared.endpoint, options: { benchmark_group: 'shared-group' } }));
      expect(job.status.state, job.out).toBe('COMPLETED');
      expect(job.out).toMatch(/namespace xferbench\/shared-group\/ of http:\/\/127\.0\.0\.1:\d+ wiped \(1 key\(s\)\)/);
      expect(job.verdictFailures).toEqual([]);
      expect((await etcdctl(shared.endpoint, ['get', 'someone-else/key', '--print-value-only'])).trim()).toBe('keep');
      expect(job.read('test-report.txt')).toContain(`etcd: external ${shared.endpoint}; namespace xferbench/shared-group/ wiped before the run`);
    });
  });
});
