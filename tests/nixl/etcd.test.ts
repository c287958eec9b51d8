// The private etcd of a tool's job, with the REAL etcd server (Debian's etcd-server): started on
// ports of its own, answering, a namespace wiped without touching others, stopped with its data
// removed and its log kept; a pid file that does not name our etcd is never acted on.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ETCD_FILES, endpointOf, etcdctl, startEtcd, stopEtcd, wipePrefix } from '../../runners/nixl/etcd.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'nixl-etcd-'));
afterAll(async () => {
  // A test that failed half-way must not leave its etcd servers running.
  for (const job of ['job-a', 'job-b']) await stopEtcd(path.join(scratch, job, 'etcd')).catch(() => false);
  rmSync(scratch, { recursive: true, force: true });
});

const running = (dataDir: string) => execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').some((l) => l.includes(dataDir));

describe('private etcd', () => {
  it('starts, serves, wipes one namespace, stops and leaves only its log', { timeout: 60_000 }, async () => {
    const dir = path.join(scratch, 'job-a', 'etcd');
    const etcd = await startEtcd({ dir });
    expect(etcd.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(endpointOf(dir)).toBe(etcd.endpoint);
    expect(readFileSync(path.join(dir, ETCD_FILES.env), 'utf8')).toContain(`NIXL_ETCD_ENDPOINTS=${etcd.endpoint}`);
    await expect(startEtcd({ dir })).rejects.toThrow(/already holds an etcd/);
    // a second job's etcd runs next to it on other ports
    const other = await startEtcd({ dir: path.join(scratch, 'job-b', 'etcd') });
    expect(other.endpoint).not.toBe(etcd.endpoint);

    await etcdctl(etcd.endpoint, ['put', 'xferbench/job-a/size', '2']);
    await etcdctl(etcd.endpoint, ['put', 'xferbench/job-a/rank/0', 'active']);
    await etcdctl(etcd.endpoint, ['put', 'xferbench/job-b/size', '1']);
    expect(await wipePrefix(etcd.endpoint, 'xferbench/job-a/')).toBe(2);
    expect((await etcdctl(etcd.endpoint, ['get', '--prefix', 'xferbench/', '--keys-only'])).trim()).toBe('xferbench/job-b/size');
    await expect(wipePrefix(etcd.endpoint, '')).rejects.toThrow(/empty prefix/);

    expect(running(path.join(dir, ETCD_FILES.data))).toBe(true);
    expect(await stopEtcd(dir)).toBe(true);
    expect(running(path.join(dir, ETCD_FILES.data))).toBe(false);
    expect(existsSync(path.join(dir, ETCD_FILES.data))).toBe(false);
    expect(existsSync(path.join(dir, ETCD_FILES.pid))).toBe(false);
    expect(existsSync(path.join(dir, ETCD_FILES.log))).toBe(true);
    await expect(etcdctl(etcd.endpoint, ['get', 'x'], 5_000)).rejects.toThrow(/etcdctl get x at http/);
    expect(await stopEtcd(dir)).toBe(false); // nothing left to stop
    await stopEtcd(other.dir);
  });

  it('never signals a process that is not the etcd of that folder', async () => {
    const dir = path.join(scratch, 'job-c', 'etcd');
    execFileSync('mkdir', ['-p', dir]);
    writeFileSync(path.join(dir, ETCD_FILES.pid), `${process.pid}\n`); // this test process
    expect(await stopEtcd(dir)).toBe(true);
    expect(existsSync(path.join(dir, ETCD_FILES.pid))).toBe(false);
  });

  it('says what to install when there is no etcd binary', async () => {
    const saved = process.env.ETCD_BIN;
    process.env.ETCD_BIN = '/nonexistent/etcd';
    try {
      await expect(startEtcd({ dir: path.join(scratch, 'job-d', 'etcd') })).rejects.toThrow(/cannot start \/nonexistent\/etcd: .*ENOENT.*install etcd-server, or set ETCD_BIN/);
    } finally {
      if (saved === undefined) delete process.env.ETCD_BIN;
      else process.env.ETCD_BIN = saved;
    }
  });
});
