// Debian's `ucx_perftest` (ucx-utils) as a baseline: a server and a client on loopback, the
// client's `Final:` line read, the server killed whatever happens. Also the transports UCX logs
// at info level (`ep_cfg[N]: rma(...)`), for the engine's logs too.
import { execa } from 'execa';
import { freePort } from '../../runners/common/free-port.ts';

export interface PerftestFinal {
  iters: number;
  /** The whole run's (its `overall` column). */
  overallLatUs: number;
  /** From its `MB/s overall`, which is bytes/s / 2^20 (perftest.c: total_average / (1024.0 * 1024.0)). */
  gbps: number;
  transports: string[];
}

/** Distinct `ep_cfg[N]: ...` transport lines UCX logs at info level. */
export function transportsIn(log: string): string[] {
  return [...new Set([...log.matchAll(/ep_cfg\[\d+\]:\s*(.+)$/gm)].map((m) => m[1].trim()))];
}

/**
 * Resolves once a ucx_perftest server (started under `stdbuf -oL`, so its lines come as written)
 * says it is listening; rejects with its output if it exits first (a port still held by the
 * previous server's process, say) or says nothing for 120 s.
 */
export function serverListening(server: ReturnType<typeof execa>): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`ucx_perftest server not listening after 120 s:\n${output}`)), 120_000);
    server.all?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Waiting for connection')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void server.then((r) => {
      clearTimeout(timer);
      reject(new Error(`ucx_perftest server exited (${r.exitCode}) before listening:\n${output}`));
    });
  });
}

/**
 * The whole run's figures of ucx_perftest's `Final:` line (iters, 50%ile lat, avg lat, overall lat,
 * MB/s avg, MB/s overall, msg/s avg, msg/s overall), or undefined when it is not such a line. The
 * "avg" columns cover only the last report interval, which can be empty on a loaded host (printed
 * `inf` and 0.00): they are not used.
 */
export function finalFigures(line: string): Omit<PerftestFinal, 'transports'> | undefined {
  const words = /^Final:\s+(.+)$/.exec(line.trim())?.[1].split(/\s+/) ?? [];
  const f = words.map((word) => (/^[-+]?(inf|nan)$/i.test(word) ? Number.NaN : Number(word)));
  const [iters, overallLatUs, overallMbps] = [f[0], f[3], f[5]];
  if (f.length !== 8 || ![iters, overallLatUs, overallMbps].every(Number.isFinite)) return undefined;
  return { iters, overallLatUs, gbps: (overallMbps * 2 ** 20) / 1e9 };
}

/**
 * One `ucx_perftest` run: `test` of `size` bytes, `iters` iterations (warm-up iters / 8), with
 * endpoint error handling (`-e`) or UCX's default, in the UCX environment `env`. The client starts
 * once the server listens; a server that says so yet refuses its client (seen on a loaded host)
 * is replaced by a fresh one on a fresh port, 3 servers at most.
 */
export async function perftest(
  test: 'ucp_put_bw' | 'ucp_put_lat' | 'ucp_get',
  size: number,
  iters: number,
  errorHandling: boolean,
  env: Record<string, string>,
): Promise<PerftestFinal> {
  let failure = '';
  for (let server = 0; server < 3; server++) {
    const run = await perftestOnce(test, size, iters, errorHandling, env);
    if ('final' in run) return run.final;
    failure = run.failure;
  }
  throw new Error(failure);
}

async function perftestOnce(
  test: 'ucp_put_bw' | 'ucp_put_lat' | 'ucp_get',
  size: number,
  iters: number,
  errorHandling: boolean,
  env: Record<string, string>,
): Promise<{ final: PerftestFinal } | { failure: string }> {
  const port = String(await freePort());
  const common = ['-p', port, ...(errorHandling ? ['-e'] : [])];
  const server = execa('stdbuf', ['-oL', 'ucx_perftest', ...common], { all: true, reject: false, env });
  const client = ['127.0.0.1', ...common, '-t', test, '-s', String(size), '-n', String(iters), '-w', String(Math.max(1, iters >> 3))];
  try {
    await serverListening(server);
    const r = await execa('ucx_perftest', client, { all: true, reject: false, env, timeout: 120_000 });
    const final = /^Final:.*$/m.exec(r.all);
    if (r.exitCode !== 0 || !final) return { failure: `ucx_perftest ${client.join(' ')}: exit ${r.exitCode}${final ? '' : ', no Final line'}\n${r.all.slice(-1500)}` };
    const figures = finalFigures(final[0]);
    if (!figures) throw new Error(`ucx_perftest ${client.join(' ')}: unexpected Final line: ${final[0]}`);
    return { final: { ...figures, transports: transportsIn(r.all) } };
  } catch (err) {
    if ((err as Error).message.startsWith('ucx_perftest server')) return { failure: (err as Error).message };
    throw err;
  } finally {
    server.kill('SIGTERM');
    await server;
  }
}
