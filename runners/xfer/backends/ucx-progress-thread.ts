// NIXL's UCX progress thread (nixlbench --enable_pt): a thread of its own progresses the UCX
// worker, so transfers complete while the rank's thread posts and polls. Here it is a Node worker
// thread calling ucp_worker_progress until idle, then arming the worker's event fd and polling it
// (1 ms at most, as NIXL's thread wakes at least every millisecond). The worker must be created in
// UCX's multi-thread mode (UCS_THREAD_MODE_MULTI): UCX then locks it around every call, from both
// threads. The rank's thread no longer progresses; it only checks its requests' states.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { XferError } from '../errors.ts';

const POLL_MS = 1;
/** Flags shared with the thread: [0] stop request, [1] progress calls that did work, [2] thread failed. */
const STOP = 0;
const PROGRESSED = 1;
const FAILED = 2;

// Runs in the worker thread (CommonJS): binds what it needs of libucp and libc itself.
const THREAD_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const koffi = require(workerData.koffiPath);
const flags = workerData.flags;
try {
  let lib;
  for (const name of workerData.libraries) { try { lib = koffi.load(name); break; } catch {} }
  if (!lib) throw new XferError('cannot load libucp (' + workerData.libraries.join(', ') + ')');
  const progress = lib.func('unsigned int ucp_worker_progress(void *worker)');
  const arm = lib.func('int8_t ucp_worker_arm(void *worker)'); // ucs_status_t is one byte
  const libc = koffi.load('libc.so.6');
  const pollfd = koffi.struct('xfer_pt_pollfd', { fd: 'int', events: 'short', revents: 'short' });
  const poll = libc.func('poll', 'int', [koffi.inout(koffi.pointer(pollfd)), 'uint64_t', 'int']);
  const worker = BigInt(workerData.worker);
  while (Atomics.load(flags, ${STOP}) === 0) {
    let busy = 0;
    while (progress(worker) !== 0 && busy < 1024) busy++;
    if (busy > 0) { Atomics.add(flags, ${PROGRESSED}, busy); continue; }
    if (arm(worker) === 0) poll({ fd: workerData.eventFd, events: 1, revents: 0 }, 1, workerData.pollMs);
  }
} catch (err) {
  Atomics.store(flags, ${FAILED}, 1);
  parentPort.postMessage(String(err && err.message || err));
}
`;

export class UcxProgressThread {
  private readonly flags = new Int32Array(new SharedArrayBuffer(3 * 4));
  private thread: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private failure: string | undefined;

  constructor(
    private readonly worker: bigint,
    private readonly eventFd: number,
  ) {}

  start(): void {
    if (this.thread) return;
    const koffiPath = createRequire(import.meta.url).resolve('koffi');
    const libraries = [process.env.XFER_LIB_UCP, 'libucp.so.0', 'libucp.so'].filter((l): l is string => !!l);
    this.thread = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { koffiPath, libraries, worker: this.worker.toString(), eventFd: this.eventFd, pollMs: POLL_MS, flags: this.flags },
    });
    this.thread.on('message', (message: string) => (this.failure = message));
    this.thread.on('error', (err) => (this.failure = err.message));
    this.exited = new Promise((resolve) => this.thread!.once('exit', () => resolve()));
  }

  /** Asks the thread to stop and waits until it has (the worker may be destroyed after). */
  async stop(): Promise<void> {
    Atomics.store(this.flags, STOP, 1);
    await this.exited;
    this.thread = undefined;
  }

  /** The rank's thread does not progress: false, or the thread's failure. */
  drain(): boolean {
    if (this.failure !== undefined || Atomics.load(this.flags, FAILED) === 1) {
      throw new XferError(`ucx: the progress thread stopped: ${this.failure ?? 'unknown error'}`);
    }
    return false;
  }

  /** Progress calls of the thread that found work (the evidence that it, not the rank, progressed). */
  get progressed(): number {
    return Atomics.load(this.flags, PROGRESSED);
  }
}
