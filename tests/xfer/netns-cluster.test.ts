// A real SLURM cluster whose two nodes are apart (tests/fixtures/xfer/netns-cluster.ts): each
// node has its own network namespace (address), hostname and /dev/shm, so ranks on ns1 and ns2
// meet over the veth link only. Brought up and down here (also when a test fails); the shared
// cluster is never touched. Checks: the nodes really are apart, the rendezvous store across
// them, ct-perftest and sweep over ucx and libfabric (tcp) verified, shm refused, and a nixl job
// of the libfabric backend that keeps fi_info of both nodes.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noSlurmReason, slurmDisabled } from '../setup/cluster.ts';
import { netnsCluster, netnsClusterScript, netnsSrun, netnsUnsupported, NETNS_NODES } from '../fixtures/xfer/netns-cluster.ts';
import { recordOf, runNixlSuite } from '../nixl/nixl-suite.ts';

const skipReason = slurmDisabled ? noSlurmReason : await netnsUnsupported();
const describeNetns = skipReason ? describe.skip : describe;
const node = ['node', 'bin/disagg-bench.js'];
const twoNodes = ['-N', '2', '-n', '2', '--ntasks-per-node=1'];

describeNetns(`two SLURM nodes apart (own network, hostname, /dev/shm)${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let scratch = '';
  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'netns-cluster-'));
    writeFileSync(path.join(scratch, 'm.txt'), '0 3M\n1M 0\n');
    const ct = (op: string) => `iters: 4\nwarmup_iters: 1\ntraffic_pattern:\n  matrix_file: m.txt\n  shards: 2\n  mem_type: cpu\n  xfer_op: ${op}\n`;
    writeFileSync(path.join(scratch, 'ct-write.yaml'), ct('WRITE'));
    writeFileSync(path.join(scratch, 'ct-read.yaml'), ct('READ'));
    try {
      await netnsClusterScript('up');
    } catch (err) {
      await netnsClusterScript('down').catch(() => {});
      throw err;
    }
  }, 300_000);
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await netnsClusterScript('down');
  }, 180_000);

  it('gives every node its own hostname, address and /dev/shm', async () => {
    const probe = 'echo "$SLURMD_NODENAME $(hostname) $(ip -4 -o addr show eth0 | awk \'{print $4}\')"; touch "/dev/shm/apart-$SLURMD_NODENAME"; sleep 1; echo "$SLURMD_NODENAME sees: $(ls /dev/shm | tr \'\\n\' \' \')"';
    const r = await netnsSrun([...twoNodes, 'bash', '-c', probe]);
    expect(r.exitCode, r.output).toBe(0);
    const { subnet } = await netnsCluster();
    expect(r.output).toContain(`ns1 ns1 ${subnet}.11/24`);
    expect(r.output).toContain(`ns2 ns2 ${subnet}.12/24`);
    expect(r.output).toMatch(/^ns1 sees: apart-ns1 $/m);
    expect(r.output).toMatch(/^ns2 sees: apart-ns2 $/m);
  });

  it('the rendezvous store joins ranks of both nodes (rank 0 on ns1, found by its node name)', async () => {
    const r = await netnsSrun(['-N', '2', '-n', '4', '--ntasks-per-node=2', 'node', '--import', 'tsx', 'tests/fixtures/xfer/store-rank.ts']);
    expect(r.exitCode, r.output).toBe(0);
    const gathered = JSON.parse(/^store: (.*)$/m.exec(r.output)![1]) as { node: string; hostname: string; addresses: string[] }[];
    expect(gathered.map((g) => g.node)).toEqual(['ns1', 'ns1', 'ns2', 'ns2']);
    expect(gathered.map((g) => g.hostname)).toEqual(['ns1', 'ns1', 'ns2', 'ns2']);
    expect(new Set(gathered.map((g) => g.addresses.join(','))).size).toBe(2);
  });

  describe.each([
    { backend: 'ucx', env: {} as Record<string, string> },
    { backend: 'libfabric', env: { FI_PROVIDER: 'tcp' } },
  ])('$backend between the nodes', ({ backend, env }) => {
    it.each(['write', 'read'])('ct-perftest (%s) moves the matrix, every buffer verified', async (op) => {
      const r = await netnsSrun([...twoNodes, ...node, 'ct-perftest', path.join(scratch, `ct-${op}.yaml`), '--backend', backend, '--verify-buffers'], { env });
      expect(r.exitCode, r.output).toBe(0);
      expect(r.output).toMatch(new RegExp(`CT perftest: .*, 2 ranks, backend ${backend}, ${op.toUpperCase()}, .*every receive buffer verified`));
      expect(r.output).toMatch(/ 0\.004194 /); // 4 MiB per iteration
    });

    it('sweep (READ and WRITE) passes its consistency check', async () => {
      const args = ['sweep', '--backend', backend.toUpperCase(), '--op_type', 'READ,WRITE', '--check_consistency', '--start_block_size', '64K', '--max_block_size', '4M', '--num_iter', '8', '--warmup_iter', '2', '--large_blk_iter_ftr', '2'];
      const r = await netnsSrun([...twoNodes, ...node, ...args], { env });
      expect(r.exitCode, r.output).toBe(0);
      expect(r.output).toMatch(/Consistency check passed: every transferred byte verified in all 14 steps/);
    });
  });

  it.each([
    { backend: 'shm', env: {} as Record<string, string>, refusal: "shm: rank 1 is on node 'ns2', rank 0 on 'ns1': shared memory reaches the same node only (use ucx)" },
    { backend: 'libfabric', env: { FI_PROVIDER: 'shm' }, refusal: "libfabric: rank 1 is on node 'ns2', rank 0 on 'ns1': libfabric's shm provider reaches the same node only" },
  ])('$backend across the nodes is refused with the reason', async ({ backend, env, refusal }) => {
    const r = await netnsSrun([...twoNodes, ...node, 'ct-perftest', path.join(scratch, 'ct-write.yaml'), '--backend', backend], { env });
    expect(r.exitCode).not.toBe(0);
    expect(r.output).toContain(refusal);
  });

  it('a nixl job on libfabric (tcp) across the nodes passes and keeps fi_info of each node', async () => {
    const run = await runNixlSuite(['sweep_libfabric_tcp_2nodes'], 'slurm', { ...(await netnsCluster()).env, PATH: process.env.PATH });
    const record = recordOf(run, 'nixl_perf_sweep_libfabric_tcp_2nodes');
    expect(record, run.output).toMatchObject({ verdict: 'passed', schedulerState: 'COMPLETED' });
    const files = readdirSync(record.logDir!);
    for (const n of NETNS_NODES) {
      expect(files).toContain(`fi_info-${n}.txt`);
      expect(readFileSync(path.join(record.logDir!, `fi_info-${n}.txt`), 'utf8')).toMatch(/^\$ fi_info\n(.|\n)*provider: tcp;ofi_rxm/);
    }
  }, 300_000);
});
