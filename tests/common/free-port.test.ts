// Ports for servers that bind a moment later: free, below the kernel's ephemeral range (where no
// outgoing connection can be given one in between), and leased: never handed out twice on a host
// while their lease lasts, by one process or several.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { freePort, freePortRange, leasePorts, portFree } from '../../runners/common/free-port.ts';

const repo = path.resolve(import.meta.dirname, '../..');

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('free ports', () => {
  it('are below the ephemeral range and can be listened on', async () => {
    for (let i = 0; i < 20; i++) {
      const port = await freePort('0.0.0.0');
      expect(port).toBeGreaterThanOrEqual(22_000); // above the local SLURM clusters' ports
      expect(port).toBeLessThan(Math.min(ephemeralLow, 29_500)); // below the stores' derived ports
      expect(await portFree(port, '0.0.0.0')).toBe(true);
    }
  });

  it('come as a range of consecutive free ports that ends below the ephemeral range', async () => {
    const first = await freePortRange(5);
    expect(first + 5).toBeLessThanOrEqual(ephemeralLow);
    expect(await Promise.all([0, 1, 2, 3, 4].map((i) => portFree(first + i)))).toEqual([true, true, true, true, true]);
  });

  it('are never handed out twice while leased, across processes', { timeout: 60_000 }, async () => {
    // 2 x 150 random picks from ~7500 ports: without leases a repeat is all but certain (~99.7 %).
    const script = `import { freePort } from './runners/common/free-port.ts';
      const ports = []; for (let i = 0; i < 150; i++) ports.push(await freePort());
      console.log(JSON.stringify(ports));`;
    const pick = () => execa('node', ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repo, stdin: 'ignore' });
    const [a, b] = await Promise.all([pick(), pick()]);
    const ports = [...JSON.parse(a.stdout), ...JSON.parse(b.stdout)] as number[];
    expect(ports).toHaveLength(300);
    expect(new Set(ports).size).toBe(300);
  });

  it('ports a caller chose itself are leased once: a second lease of any of them, or of a port freePort gave, is refused', async () => {
    const given = await freePort();
    expect(leasePorts([given])).toBe(false);
    // Above freePort's band, where only this test leases (an earlier run's leases may still hold some).
    let chosen = 0;
    for (let attempt = 0; attempt < 100 && chosen === 0; attempt++) {
      const first = 60_000 + 2 * Math.floor(Math.random() * 2500);
      if (leasePorts([first, first + 1])) chosen = first;
    }
    expect(chosen).toBeGreaterThan(0);
    expect(leasePorts([chosen + 1])).toBe(false);
    expect(leasePorts([chosen - 1, chosen])).toBe(false);
  });

  it('a port something listens on is not free', async () => {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
    try {
      expect(await portFree(port)).toBe(false);
    } finally {
      server.close();
    }
  });
});
