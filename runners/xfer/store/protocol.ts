// The rendezvous store's wire format: one JSON object per line. Buffers travel as {"$b64": "..."}
// so descriptors (UCX worker addresses, remote keys, CUDA IPC handles) pass through unchanged.
import type { Socket } from 'node:net';

export type CollectiveKind = 'barrier' | 'gather' | 'alltoall';

export type Request =
  /**
   * `attempt` counts the rank's hellos (1, 2, ...): a retry supersedes an earlier one, never the reverse.
   * `proof`: the job's secret proven for this hello (helloContext), where the job has one.
   */
  | { id: number; op: 'hello'; rank: number; worldSize: number; job: string; attempt?: number; proof?: string }
  /**
   * The rank took the hello's answer and keeps this connection; no reply. Until it arrives, the
   * connection closing is a hello the rank gave up on (it retries), not the rank dying.
   */
  | { id: number; op: 'attach' }
  | { id: number; op: 'set'; key: string; value: unknown }
  | { id: number; op: 'get'; key: string }
  | { id: number; op: 'wait'; key: string; from: number | null; timeoutMs: number }
  | {
      id: number;
      op: 'collective';
      kind: CollectiveKind;
      name: string;
      /** Unique per use: name plus this rank's call count for that name. */
      key: string;
      ranks: number[];
      value: unknown;
      timeoutMs: number;
    }
  | { id: number; op: 'time' }
  | { id: number; op: 'bye' };

/** What went wrong, with the ranks involved, so the client can rebuild a typed error. */
export interface WireError {
  kind: 'timeout' | 'dead' | 'invalid';
  message: string;
  what?: string;
  ranks?: number[];
  timeoutMs?: number;
  /** The refusing store's job, on a refused hello: a rank refused by its own job's store stops trying. */
  job?: string;
}

export type Reply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; error: WireError }
  | { event: 'dead'; rank: number; reason: string };

export function encodeLine(message: unknown): string {
  return JSON.stringify(message, function (this: Record<string, unknown>, key, value) {
    const raw = this[key];
    if (raw instanceof Uint8Array) return { $b64: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
    return value;
  }) + '\n';
}

export function decodeLine(line: string): unknown {
  return JSON.parse(line, (_key, value) =>
    value !== null && typeof value === 'object' && typeof value.$b64 === 'string' && Object.keys(value).length === 1
      ? Buffer.from(value.$b64, 'base64')
      : value,
  );
}

/** Calls `onMessage` for every complete line received on `socket`. */
export function readLines(
  socket: Socket,
  onMessage: (message: unknown) => void,
  onBadLine: (err: Error) => void,
  alreadyReceived = '',
): void {
  let pending = '';
  const receive = (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.length === 0) continue;
      let message: unknown;
      try {
        message = decodeLine(line);
      } catch (err) {
        onBadLine(err as Error);
        continue;
      }
      onMessage(message);
    }
  };
  socket.setEncoding('utf8');
  socket.on('data', receive);
  if (alreadyReceived.length > 0) receive(alreadyReceived);
}

export function collectiveLabel(kind: CollectiveKind, name: string): string {
  const word = kind === 'barrier' ? 'barrier' : kind === 'gather' ? 'all-gather' : 'all-to-all';
  return `${word} '${name}'`;
}

export function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** What a hello's proof of the job's secret is made over: who says hello, in which job. */
export function helloContext(hello: { job: string; rank: number; worldSize: number }): string {
  return `xfer-store-hello\u0000${hello.job}\u0000${hello.rank}\u0000${hello.worldSize}`;
}
