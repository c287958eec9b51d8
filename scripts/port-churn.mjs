// Holds COUNT loopback TCP connections open and replaces a tenth of them every second, so their
// local ports (from the kernel's ephemeral range) wander over the whole range: what a busy CI host
// does to a test that binds a port it assumed free. Used by scripts/loaded-suite.sh -c; stops on
// SIGTERM or SIGINT, closing everything it opened.
//
//   node scripts/port-churn.mjs COUNT
import net from 'node:net';

const count = Number(process.argv[2]);
// Each connection costs this process two descriptors (both ends).
if (!Number.isInteger(count) || count < 1 || count > 8000) {
  console.error(`port-churn: COUNT must be a whole number from 1 to 8000, got '${process.argv[2] ?? ''}'`);
  process.exit(2);
}

const accepted = new Set();
const server = net.createServer((socket) => {
  accepted.add(socket);
  socket.on('error', () => {});
  socket.on('close', () => accepted.delete(socket));
});
const held = [];
let stopping = false;

function open() {
  const socket = net.connect(server.address().port, '127.0.0.1');
  socket.on('error', () => {});
  socket.on('close', () => {
    const at = held.indexOf(socket);
    if (at >= 0) held.splice(at, 1);
  });
  held.push(socket);
}

function stop() {
  if (stopping) return;
  stopping = true;
  for (const socket of [...held, ...accepted]) socket.resetAndDestroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

server.listen(0, '127.0.0.1', () => {
  for (let i = 0; i < count; i++) open();
  setInterval(() => {
    if (stopping) return;
    // Reset, not closed: a reset leaves no TIME_WAIT holding the old port for a minute.
    for (const socket of held.splice(0, Math.max(1, Math.floor(count / 10)))) socket.resetAndDestroy();
    while (held.length < count) open();
  }, 1000);
});
