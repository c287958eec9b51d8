// A TCP port free on this host now: the kernel picks one (listen on port 0), the probe closes, and
// the caller binds it next (a small race with any other process, acceptable for stores and tests).
import net from 'node:net';

/** A free port on `host` ('0.0.0.0': every interface). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
