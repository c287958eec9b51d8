// nixlbench's runtimes on the sweep (--etcd_endpoints, --benchmark_group,
// --runtime_type were accepted and ignored): two processes started on their own, with the REAL
// etcd, get their ranks by arrival under xferbench/<group>/ and leave the namespace empty; stale
// keys of an earlier run fail as nixlbench fails; ASIO makes the process that binds the port rank
// 0; under --ranks the runtime flags are refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../runners/common/free-port.ts';
import { etcdctl, startEtcd, stopEtcd } from '../../../runners/nixl/etcd.ts';
import { runBench } from './bench-cli.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'sweep-runtime-'));
let endpoint = '';
beforeAll(async () => {
  endpoint = (await startEtcd({ dir: path.join(scratch, 'etcd') })).endpoint;
}, 60_000);
afterAll(async () => {
  await stopEtcd(path.join(scratch, 'etcd'));
  rmSync(scratch, { recursive: true, force: true });
});

const small = ['--max_block_size', '16K', '--num_iter', '4', '--warmup_iter', '0', '--large_blk_iter_ftr', '1', '--check_consistency'];

describe('sweep: nixlbench runtimes', () => {
  it('ETCD: ranks by arrival, the table from rank 0, every byte verified, the namespace removed', async () => {
    const args = ['sweep', '--etcd_endpoints', endpoint, '--benchmark_group', 'two', ...small];
    const [a, b] = await Promise.all([runBench(args), runBench(args)]);
    expect([a.exitCode, b.exitCode], a.out + b.out).toEqual([0, 0]);
    const registered = [a.out, b.out].map((out) => /ETCD Runtime: Registered as rank (\d) item \d of 2/.exec(out)?.[1]).sort();
    expect(registered).toEqual(['0', '1']);
    const rank0 = /Registered as rank 0/.test(a.out) ? a.out : b.out;
    expect(rank0).toMatch(/Runtime \(--runtime_type=\[ETCD,ASIO\]\)\s+: ETCD http:\/\/127\.0\.0\.1:\d+ \(group two\)/);
    expect(rank0).toContain('Consistency check passed');
    expect((await etcdctl(endpoint, ['get', '--prefix', 'xferbench/two/', '--keys-only'])).trim()).toBe('');
  });

  it("ETCD: keys an earlier run left make the rank too large, nixlbench's failure, and are removed", async () => {
    await etcdctl(endpoint, ['put', 'xferbench/stale//size', '2']);
    const r = await runBench(['sweep', '--etcd_endpoints', endpoint, '--benchmark_group', 'stale', ...small]);
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain('Rank 2 is greater than or equal to global size 2');
    expect((await etcdctl(endpoint, ['get', '--prefix', 'xferbench/stale/', '--keys-only'])).trim()).toBe('');
  });

  it('ASIO: the process that binds the port is rank 0, the other connects', async () => {
    const port = String(await freePort()); // free and leased: no other socket holds it
    const args = ['sweep', '--runtime_type', 'ASIO', '--asio_port', port, ...small];
    const [a, b] = await Promise.all([runBench(args), runBench(args)]);
    expect([a.exitCode, b.exitCode], a.out + b.out).toEqual([0, 0]);
    expect([a.out, b.out].filter((o) => o.includes('ASIO runtime bind/listen error -- using connect() instead'))).toHaveLength(1);
    expect([a.out, b.out].filter((o) => o.includes('Consistency check passed'))).toHaveLength(1);
  });

  it('ASIO: another service on the port is named at once, not waited on for 120 s', async () => {
    const port = await freePort('0.0.0.0');
    const other = net.createServer((socket) => socket.end('SSH-2.0-not-a-beacon\r\n'));
    await new Promise<void>((resolve) => other.listen(port, '0.0.0.0', () => resolve()));
    try {
      const r = await runBench(['sweep', '--runtime_type', 'ASIO', '--asio_port', String(port), ...small]);
      expect(r.exitCode).toBe(1);
      expect(r.out).toContain(`ASIO runtime: something else listens at 127.0.0.1:${port} (it answered "SSH-2.0-not-a-beacon\\r\\n", not the other process's address); choose another --asio_port`);
    } finally {
      other.close();
    }
  });

  it('refuses the runtime flags where the ranks come from elsewhere, and a group without etcd', async () => {
    const r = await runBench(['sweep', '--ranks', '2', '--etcd_endpoints', endpoint, ...small]);
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain("--etcd_endpoints: --ranks already gives the ranks; nixlbench's runtimes are for processes started on their own");
    const g = await runBench(['sweep', '--benchmark_group', 'x', ...small]);
    expect(g.out).toContain("--benchmark_group: nixlbench's ETCD runtime needs --etcd_endpoints here");
  });
});
