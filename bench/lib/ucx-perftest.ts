// Debian's `ucx_perftest` (ucx-utils) as a baseline: a server and a client on loopback, the
// client's `Final:` line read, the server killed whatever happens. Also the transports UCX logs
// at info level (`ep_cfg[N]: rma(...)`), for the engine's logs too.
import { execa } from 'execa';
import { freePort } from '../../runners/common/free-port.ts';

export interface PerftestFinal {
  iters: number;
  avgLatUs: number;
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
 * One `ucx_perftest` run: `test` of `size` bytes, `iters` iterations (warm-up iters / 8), with
 * endpoint error handling (`-e`) or UCX's default, in the UCX environment `env`.
 */
export async function perftest(
  test: 'ucp_put_bw' | 'ucp_put_lat' | 'ucp_get',
  size: number,
  iters: number,
  errorHandling: boolean,
  env: Record<string, string>,
): Promise<PerftestFinal> {
  const port = String(await freePort());
  const common = ['-p', port, ...(errorHandling ? ['-e'] : [])];
  const server = execa('ucx_perftest', common, { all: true, reject: false, env });
  const client = ['127.0.0.1', ...common, '-t', test, '-s', String(size), '-n', String(iters), '-w', String(Math.max(1, iters >> 3))];
  try {
    for (let attempt = 0; ; attempt++) {
      const r = await execa('ucx_perftest', client, { all: true, reject: false, env, timeout: 120_000 });
      const final = /^Final:\s+(.+)$/m.exec(r.all);
      if (r.exitCode === 0 && final) {
        const f = final[1].trim().split(/\s+/).map(Number);
        if (f.length !== 8 || f.some(Number.isNaN)) throw new Error(`ucx_perftest ${client.join(' ')}: unexpected Final line: ${final[0]}`);
        // Final: iters, 50%ile lat, avg lat, overall lat, MB/s avg, MB/s overall, msg/s avg, msg/s overall
        return { iters: f[0], avgLatUs: f[2], overallLatUs: f[3], gbps: (f[5] * 2 ** 20) / 1e9, transports: transportsIn(r.all) };
      }
      // The server may not listen yet: the client then fails to connect; retry for ~3 s.
      if (attempt >= 30 || server.exitCode !== null) {
        throw new Error(`ucx_perftest ${client.join(' ')}: exit ${r.exitCode}${final ? '' : ', no Final line'}\n${r.all.slice(-1500)}`);
      }
      await new Promise((ok) => setTimeout(ok, 100));
    }
  } finally {
    server.kill('SIGTERM');
    await server;
  }
}
