// nixlbench's ASIO runtime through the adapter: the command line (no etcd, the listener's address
// and port filled in per run), the config rules, and the start order on real sockets: the first
// task's port counts as listening only once a socket listens on it, and the other task gets the
// published endpoint (or a sentence naming the listener when it never listened).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nixlbenchSpec } from '../../runners/nixl/tools/nixlbench.ts';
import { fillPlaceholders } from '../../runners/nixl/tool-spec.ts';
import { ASIO_ENDPOINT_FILE, announceWhenListening, awaitAsioEndpoint, listensOn, pickAsioEndpoint } from '../../runners/nixl/asio-turn.ts';
import { freePort } from '../../runners/common/free-port.ts';
import { nixlType } from '../../framework/types/nixl.ts';

const job = { logDir: '/logs/t1', configDir: '/cfg', ranks: 2, nodes: 1, tag: 'nixl_asio' };
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'nixl-asio-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('nixlbench runtime: ASIO', () => {
  it('builds --runtime_type ASIO with the listener as placeholders, no etcd, listen ordering', () => {
    const spec = nixlbenchSpec({ runtime: 'ASIO', start_order: [1, 0], options: { op_type: 'READ', max_block_size: '1M' } }, job, 'ucx');
    const command = ['nixlbench', '--runtime_type', 'ASIO', '--asio_address', '{asio_address}', '--asio_port', '{asio_port}', '--backend', 'UCX', '--op_type=READ', '--max_block_size=1048576'];
    expect(spec.commands).toEqual([command, command]);
    expect(spec.etcd).toBeUndefined();
    expect(spec.ordering).toEqual({ kind: 'listen', timeoutS: 120 });
    expect(spec.startOrder).toEqual([1, 0]);
    expect(command.map((w) => fillPlaceholders(w, { task: 1, asio: { address: '10.0.0.2', port: 40123 } })).slice(3, 7)).toEqual(['--asio_address', '10.0.0.2', '--asio_port', '40123']);
  });

  it('refuses 3 ranks, an etcd beside ASIO, and the flags the adapter sets', () => {
    const config = {
      metadata: { description: 'ASIO rules' },
      benchmark: { kind: 'nixlbench', ranks: 3, backend: 'ucx' },
      nixlbench: { runtime: 'ASIO', etcd: 'http://etcd:2379', options: { asio_port: 1234, num_target_dev: 2 } },
    };
    const messages = nixlType.rules(config, { file: path.join(scratch, 'asio.yaml') }).map((v) => `${v.path.join('.')}: ${v.message}`);
    expect(messages).toContain("benchmark.ranks: nixlbench's ASIO runtime joins exactly 2 processes, not 3");
    expect(messages).toContain('nixlbench.etcd: runtime: ASIO uses no etcd: remove etcd (or use runtime: ETCD)');
    expect(messages.some((m) => m.startsWith('nixlbench.options.asio_port: asio_port is set by the adapter'))).toBe(true);
  });

  it('the listener is published only once its port listens; the other task then reads it', async () => {
    const endpoint = await pickAsioEndpoint(1);
    expect(endpoint.address).toBe('127.0.0.1');
    // Below the kernel's ephemeral range, where no outgoing connection or port-0 listener of another
    // process can take it between the pick and the bind (a loaded run once saw one listen there).
    const ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    expect(endpoint.port).toBeLessThan(ephemeralLow);
    expect(listensOn(endpoint.port)).toBe(false);
    const dir = fs.mkdtempSync(path.join(scratch, 'job-'));
    const waiting = awaitAsioEndpoint(dir, 1, 0, 30);
    const server = net.createServer();
    let published = false;
    const announcing = announceWhenListening(dir, endpoint, () => true, 30).then((ok) => (published = ok));
    await new Promise((r) => setTimeout(r, 300));
    expect(published).toBe(false); // nothing listens yet: nothing published
    expect(fs.existsSync(path.join(dir, ASIO_ENDPOINT_FILE))).toBe(false);
    await new Promise<void>((resolve) => server.listen(endpoint.port, endpoint.address, resolve));
    await announcing;
    expect(published).toBe(true);
    expect(await waiting).toEqual(endpoint);
    await new Promise((r) => server.close(r));
  });

  it('a listener whose tool exits before binding publishes nothing, and the other task names it', async () => {
    const dir = fs.mkdtempSync(path.join(scratch, 'job-'));
    const endpoint = { address: '127.0.0.1', port: await freePort('127.0.0.1') };
    expect(await announceWhenListening(dir, endpoint, () => false, 30)).toBe(false);
    await expect(awaitAsioEndpoint(dir, 1, 0, 0.3)).rejects.toThrow('task 1: task 0 did not listen on its ASIO port within 0.3 s (did it fail? see its log)');
  });
});
