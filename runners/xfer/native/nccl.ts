// libnccl through koffi: unique id, communicator, grouped point-to-point send/recv.
// Loaded lazily: importing this module on a machine without NCCL is fine.
import koffi from 'koffi';
import { namedStruct } from './named-type.ts';
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary, optionalFunc } from './load.ts';

export const NCCL_UNIQUE_ID_BYTES = 128;
export const ncclUint8 = 1;
const ncclInProgress = 7;

export interface Nccl {
  version(): number;
  /** The 128 raw bytes of an ncclUniqueId (rank 0 makes it, the store hands it out). */
  uniqueId(): Buffer;
  /** Blocks until all `nranks` ranks have called it (on the current CUDA device). */
  commInitRank(nranks: number, id: Uint8Array, rank: number): bigint;
  commDestroy(comm: bigint): void;
  /** Stops a communicator whose operations will never complete (a peer died). */
  commAbort(comm: bigint): void;
  /** Throws the communicator's asynchronous error, if any (network failure, peer gone). */
  checkAsyncError(comm: bigint): void;
  groupStart(): void;
  groupEnd(): void;
  send(buffer: bigint, bytes: number, peer: number, comm: bigint, stream: bigint): void;
  recv(buffer: bigint, bytes: number, peer: number, comm: bigint, stream: bigint): void;
}

export const nccl = lazyBinding((): Nccl => {
  const lib = openLibrary('nccl', ['libnccl.so.2', 'libnccl.so']);
  // By value (128 bytes); uint8_t so koffi does not turn it into a string (see cudart.ts).
  const UniqueId = namedStruct('xfer_ncclUniqueId', { internal: koffi.array('uint8_t', NCCL_UNIQUE_ID_BYTES) });
  const f = {
    get_version: lib.func('int ncclGetVersion(_Out_ int *version)'),
    get_error_string: lib.func('const char *ncclGetErrorString(int result)'),
    get_unique_id: lib.func('ncclGetUniqueId', 'int', [koffi.out(koffi.pointer(UniqueId))]),
    comm_init_rank: lib.func('ncclCommInitRank', 'int', [koffi.out(koffi.pointer('void *')), 'int', UniqueId, 'int']),
    comm_destroy: lib.func('int ncclCommDestroy(void *comm)'),
    comm_abort: lib.func('int ncclCommAbort(void *comm)'),
    comm_get_async_error: lib.func('int ncclCommGetAsyncError(void *comm, _Out_ int *asyncError)'),
    group_start: lib.func('int ncclGroupStart(void)'),
    group_end: lib.func('int ncclGroupEnd(void)'),
    send: lib.func('int ncclSend(const void *buf, size_t count, int datatype, int peer, void *comm, void *stream)'),
    recv: lib.func('int ncclRecv(void *buf, size_t count, int datatype, int peer, void *comm, void *stream)'),
  };
  const get_last_error = optionalFunc(lib, 'const char *ncclGetLastError(void *comm)') ?? (() => null); // NCCL >= 2.13
  const check = (rc: number, call: string, comm: bigint | null = null): void => {
    if (rc === 0) return;
    const last = get_last_error(comm) as string | null;
    const detail = `${f.get_error_string(rc) as string}${last ? ` (${last})` : ''}`;
    throw new NativeCallError('nccl', call, rc, detail);
  };
  return {
    version() {
      const v = [0];
      check(f.get_version(v), 'ncclGetVersion');
      return v[0];
    },
    uniqueId() {
      const id: { internal?: Uint8Array } = {};
      check(f.get_unique_id(id), 'ncclGetUniqueId');
      return Buffer.from(id.internal!);
    },
    commInitRank(nranks, id, rank) {
      const comm: [bigint | null] = [null];
      check(f.comm_init_rank(comm, nranks, { internal: new Uint8Array(id) }, rank), `ncclCommInitRank(rank ${rank} of ${nranks})`);
      return comm[0]!;
    },
    commDestroy: (comm) => check(f.comm_destroy(comm), 'ncclCommDestroy'),
    commAbort: (comm) => check(f.comm_abort(comm), 'ncclCommAbort'),
    checkAsyncError(comm) {
      const err = [0];
      check(f.comm_get_async_error(comm, err), 'ncclCommGetAsyncError', comm);
      if (err[0] !== 0 && err[0] !== ncclInProgress) check(err[0], 'communicator (asynchronous error)', comm);
    },
    groupStart: () => check(f.group_start(), 'ncclGroupStart'),
    groupEnd: () => check(f.group_end(), 'ncclGroupEnd'),
    send: (buffer, bytes, peer, comm, stream) =>
      check(f.send(buffer, bytes, ncclUint8, peer, comm, stream), `ncclSend(${bytes} bytes to rank ${peer})`, comm),
    recv: (buffer, bytes, peer, comm, stream) =>
      check(f.recv(buffer, bytes, ncclUint8, peer, comm, stream), `ncclRecv(${bytes} bytes from rank ${peer})`, comm),
  };
});
