// Ports for servers that bind a moment later: free, and below the kernel's ephemeral range, where
// no outgoing connection can be given one in between.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, freePortRange, portFree } from '../../runners/common/free-port.ts';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('free ports', () => {
  it('are below the ephemeral range and can be listened on', async () => {
    for (let i = 0; i < 20; i++) {
      const port = await freePort('0.0.0.0');
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(ephemeralLow);
      expect(await portFree(port, '0.0.0.0')).toBe(true);
    }
  });

  it('come as a range of consecutive free ports that ends below the ephemeral range', async () => {
    const first = await freePortRange(5);
    expect(first + 5).toBeLessThanOrEqual(ephemeralLow);
    expect(await Promise.all([0, 1, 2, 3, 4].map((i) => portFree(first + i)))).toEqual([true, true, true, true, true]);
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
