// The KV hand-over admits only the job's own servers: the servers of a llamacpp deployment join one
// transfer world through the context server's rendezvous store, which holds the job's secret
// (DISAGG_JOB_SECRET of the job's environment). A generation server that does not prove it (another
// job's secret, or none) is refused before anything is handed over, and ends saying so; a stranger
// who knows the deployment's store and job id is refused, and the deployment serves on.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { jobProof, newJobSecret } from '../../runners/common/job-secret.ts';
import { readClusterFile } from '../../runners/llamacpp/cluster-file.ts';
import { kvRankInfo } from '../../runners/llamacpp/kv-link.ts';
import { encodeLine, helloContext } from '../../runners/xfer/store/protocol.ts';
import { complete, startDisaggregated, type Deployment } from '../fixtures/llamacpp/deployment.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'llamacpp-secret-'));
const env = { ...process.env, DISAGG_MODEL_CACHE: path.join(tmpdir(), 'disagg-bench-test-models') };
const started: Deployment[] = [];
afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  rmSync(scratch, { recursive: true, force: true });
});

const ofJob = (secret: string) => ({ DISAGG_JOB_SECRET: secret });
/** The deployment's transfer world as its generation server (rank 1) joins it. */
function genRankInfo(dir: string) {
  const cluster = readClusterFile(path.join(dir, 'server_config.yaml'));
  return kvRankInfo(cluster, 1, cluster.generation_servers[0].url);
}

it('a generation server without the job\'s secret (another job\'s, or none) is refused by the store and ends saying so; nothing is handed over', { timeout: 180_000 }, async () => {
  const secret = newJobSecret();
  // Refused by its own job's store, the server stops at once (no retries until the connect timeout).
  const attempts = [newJobSecret(), ''].map((genSecret, i) =>
    startDisaggregated(path.join(scratch, `refused-${i}`), env, { processEnv: { CTX_0: ofJob(secret), ROUTER: ofJob(secret), GEN_0: ofJob(genSecret) } }).then(
      (d) => (started.push(d), 'served'),
      (err: Error) => err.message,
    ),
  );
  for (const outcome of await Promise.all(attempts)) {
    expect(outcome).toMatch(/^GEN_0 exited \(\d+\): .*cannot reach the store .* does not carry job \S*test-\d+\S*'s secret \(DISAGG_JOB_SECRET of the job's environment\); refused/);
    expect(outcome).not.toContain(secret);
  }
});

it('the servers of one job hand over; a stranger with the store\'s address and the job id is refused and the deployment serves on', { timeout: 180_000 }, async () => {
  const secret = newJobSecret();
  const dir = path.join(scratch, 'one-job');
  const d = await startDisaggregated(dir, env, { processEnv: { CTX_0: ofJob(secret), GEN_0: ofJob(secret), ROUTER: ofJob(secret) } });
  started.push(d);
  const prompt = Array.from({ length: 24 }, (_, i) => (11 + 97 * i) % 32000);
  const first = await complete(d.url, prompt, 4);
  expect(first).toHaveLength(4);

  // The stranger says hello as the generation server would (its rank, the world's size and job id), without the secret.
  const { job, storePorts } = genRankInfo(dir);
  for (const proof of [undefined, jobProof(newJobSecret(), helloContext({ job, rank: 1, worldSize: 2 }))]) {
    const reply = await exchange(storePorts[0], encodeLine({ id: 0, op: 'hello', rank: 1, worldSize: 2, job, ...(proof ? { proof } : {}) }));
    expect(JSON.parse(reply!)).toMatchObject({ ok: false, error: { message: `store: this hello does not carry job ${job}'s secret (DISAGG_JOB_SECRET of the job's environment); refused` } });
  }
  expect(await complete(d.url, prompt, 4)).toEqual(first);
  expect(d.logs.get('GEN_0')!.filter((l) => l.startsWith('kv_handover'))).toHaveLength(2);
});

/** The first line the store at 127.0.0.1:`port` answers to `line` (undefined: closed without one). */
function exchange(port: number, line: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(line));
    let data = '';
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (chunk) => (data += chunk));
    socket.on('close', () => resolve(data ? data.split('\n')[0] : undefined));
    socket.on('error', () => resolve(undefined));
  });
}
