// How the two sides of an LMCache-style test meet: started by one command (--ranks 2, rank 0 the
// sender), or on their own as the seed's two terminals (--role sender|receiver) at
// --master-addr:--master-port (the sender serves the rendezvous) or at LMCache's --host:--port
// (the receiver's address: the receiver serves, as LMCache's receiver listens there).
import type { OptionSpec } from '../../../common/args/read-args.ts';
import { rankFromEnv, type RankInfo } from '../../rank.ts';
import type { StoreOptions } from '../../store.ts';
import { UsageError, choiceOption, intOption } from '../common/options.ts';

export const SENDER = 0;
export const RECEIVER = 1;

export interface PipeMeeting {
  /** Set when the two sides are started on their own: sender = rank 0, receiver = rank 1. */
  role?: 'sender' | 'receiver';
  masterAddr: string;
  masterPort: number;
  /** LMCache's --host/--port: the receiver's address (it serves the rendezvous there). */
  receiverAddress?: { host: string; port: number };
}

export const pipeMeetingOptionSpec: OptionSpec = {
  role: { type: 'string' },
  'master-addr': { type: 'string' },
  'master-port': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
};

export function parsePipeMeeting(v: Record<string, unknown>, defaultPort: number): PipeMeeting {
  const str = (name: string) => v[name] as string | undefined;
  const lmcacheAddress = str('host') !== undefined || str('port') !== undefined;
  if (lmcacheAddress && (str('master-addr') !== undefined || str('master-port') !== undefined)) {
    throw new UsageError("--host/--port (LMCache's: where the receiver listens) and --master-addr/--master-port (where the sender's rendezvous is) are two ways to meet: give one pair");
  }
  if (lmcacheAddress && str('role') === undefined) {
    throw new UsageError('--host/--port name the receiver when sender and receiver are started on their own (--role sender|receiver); with --ranks 2 both run here');
  }
  return {
    role: str('role') === undefined ? undefined : choiceOption('role', str('role')!, ['sender', 'receiver'] as const),
    masterAddr: str('master-addr') ?? '127.0.0.1',
    masterPort: intOption('master-port', str('master-port') ?? String(defaultPort)),
    // LMCache's defaults: localhost:5555
    receiverAddress: lmcacheAddress ? { host: str('host') ?? 'localhost', port: intOption('port', str('port') ?? '5555') } : undefined,
  };
}

/** This process's rank when started on its own with --role; `tag` keeps two tests' stores apart. */
export function roleRank(m: PipeMeeting, tag: string): RankInfo {
  const at = m.receiverAddress ?? { host: m.masterAddr, port: m.masterPort };
  return rankFromEnv({
    RANK: String(m.role === 'sender' ? SENDER : RECEIVER),
    WORLD_SIZE: '2',
    MASTER_ADDR: at.host,
    MASTER_PORT: String(at.port),
    XFER_JOB_ID: `${tag}:${at.host}:${at.port}`,
    XFER_NODE: process.env.XFER_NODE,
  });
}

/** Which rank serves the rendezvous: the receiver at LMCache's --host:--port, else rank 0. */
export function pipeStoreOptions(m: PipeMeeting, rank: number): StoreOptions {
  return m.receiverAddress ? { serve: rank === RECEIVER } : {};
}
