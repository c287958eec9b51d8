// The lanes UCX chose for each endpoint configuration, from what it logs at UCX_LOG_LEVEL=info:
// which transport carries RMA, atomics, active messages and keepalive towards a peer. The runs of
// the real tools (and the engine beside them) record these to say which transports were measured.
//   UCX 1.22: `[..] ucp_worker.c:1991 UCX  INFO    initiator intra-node cfg#0 rma(sysv/memory posix/memory)  am(sysv/memory cma/memory)  ka(sysv/memory)`
//             -> `intra-node: rma(sysv/memory posix/memory) am(sysv/memory cma/memory) ka(sysv/memory)`
//   older:    `... ep_cfg[0]: rma(posix/memory) ...` -> `rma(posix/memory) ...`

/** The distinct lane sets in a log, in the order first seen. */
export function ucxLanes(text: string): string[] {
  const lanes: string[] = [];
  for (const line of text.split('\n')) {
    const current = /UCX\s+INFO\s+(?:\S+\s+)?(self|intra-node|inter-node)\s+cfg#\d+\s+(.+)$/.exec(line);
    const older = /ep_cfg\[\d+\]: (.+)$/.exec(line);
    if (current) lanes.push(`${current[1]}: ${current[2].trim().replace(/\s+/g, ' ')}`);
    else if (older) lanes.push(older[1].trim());
  }
  return [...new Set(lanes)];
}
