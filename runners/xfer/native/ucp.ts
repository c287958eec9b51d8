// libucp (UCX) through koffi: context, worker, endpoints, memory registration, remote keys,
// one-sided put/get and flush. Parameter structs are passed as zeroed buffers with only the fields
// named in their field_mask filled in: UCX reads nothing else, so the layout stays valid from
// UCX 1.10 on (offsets below are x86-64/aarch64, from ucp.h). The context asks for what NIXL's UCX
// backend asks for (features RMA, AMO32, AMO64, AM; its UCX configuration defaults), plus WAKEUP
// for the engine's event-driven progress (NIXL adds it for its progress thread). ucs_status_t is a
// packed (one-byte) enum: bound as int8_t, or its negative codes read as 176 and the like.
import koffi from 'koffi';
import { namedProto } from './named-type.ts';
import fs from 'node:fs';
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary } from './load.ts';
import { planUcxDefaults } from './ucx-defaults.ts';

const UCP_FEATURE_RMA = 1n << 1n;
const UCP_FEATURE_AMO32 = 1n << 2n;
const UCP_FEATURE_AMO64 = 1n << 3n;
const UCP_FEATURE_WAKEUP = 1n << 4n;
const UCP_FEATURE_AM = 1n << 6n;
const UCP_PARAM_FIELD_FEATURES = 1n << 0n;
const UCP_WORKER_PARAM_FIELD_THREAD_MODE = 1n << 0n;
const UCS_THREAD_MODE_SINGLE = 0;
const UCS_THREAD_MODE_MULTI = 2;
const UCP_WORKER_ATTR_FIELD_THREAD_MODE = 1n << 0n;
const UCP_EP_PARAM_FIELD_REMOTE_ADDRESS = 1n << 0n;
const UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE = 1n << 1n;
const UCP_EP_PARAM_FIELD_ERR_HANDLER = 1n << 2n;
const UCP_ERR_HANDLING_MODE_NONE = 0;
const UCP_ERR_HANDLING_MODE_PEER = 1;
const UCP_MEM_MAP_PARAM_FIELD_ADDRESS = 1n << 0n;
const UCP_MEM_MAP_PARAM_FIELD_LENGTH = 1n << 1n;
const UCP_MEM_MAP_PARAM_FIELD_FLAGS = 1n << 2n;
const UCP_MEM_MAP_ALLOCATE = 1 << 1;
const UCP_MEM_ATTR_FIELD_ADDRESS = 1n << 0n;
const UCP_MEM_ATTR_FIELD_LENGTH = 1n << 1n;
const UCP_OP_ATTR_FIELD_FLAGS = 1 << 4;
const UCP_OP_ATTR_FIELD_MEMH = 1 << 8;
const UCP_OP_ATTR_FLAG_MULTI_SEND = 1 << 19;
/** ucp_request_param_t's memh field (op_attr_mask @0, flags @4, request @8, cb @16, datatype @24, user_data @32, reply_buffer @40, memory_type @48, recv_info @56). */
const REQUEST_PARAM_MEMH_OFFSET = 64;
const UCP_EP_CLOSE_FLAG_FORCE = 1 << 0;
const UCS_ERR_BUSY = -15;
/** UCS_PTR_IS_ERR: status pointers at or above (uintptr_t)UCS_ERR_LAST (-100) carry an error. */
const ERR_PTR_FLOOR = (1n << 64n) - 100n;

/** A request handle from a *_nbx call; null when the operation completed at once. */
export type UcpRequest = bigint | null;

function hasRdmaDevice(): boolean {
  try {
    return fs.readdirSync('/sys/class/infiniband').length > 0;
  } catch {
    return false;
  }
}

/** ucp_err_handling_mode_t of an endpoint: 'peer' detects a failed peer, 'none' does not. */
export type UcpErrorMode = 'peer' | 'none';

/** Memory that UCX allocated and registered (ucp_mem_map with UCP_MEM_MAP_ALLOCATE). */
export interface UcpAllocation {
  memh: bigint;
  address: bigint;
  /** Bytes UCX mapped (at least the length asked for). */
  length: number;
}

export interface Ucp {
  versionString(): string;
  /**
   * Reads UCX_* from the environment, applies NIXL's and the engine's defaults (ucx-defaults.ts)
   * where the environment and `overrides` are silent, then `overrides` (e.g. { TLS: 'tcp' }),
   * which must all be valid. Returns the context, the defaults this UCX rejected (skipped, as NIXL
   * skips them) and the engine's defaults the environment replaced.
   */
  init(overrides?: Record<string, string>): { context: bigint; skippedDefaults: string[]; userReplaced: string[] };
  cleanup(context: bigint): void;
  /**
   * 'multi' (UCS_THREAD_MODE_MULTI): several threads may call into the worker (a progress
   * thread); refused when this UCX was built without multi-thread support.
   */
  workerCreate(context: bigint, threads?: 'single' | 'multi'): bigint;
  workerDestroy(worker: bigint): void;
  workerAddress(worker: bigint): Buffer;
  workerProgress(worker: bigint): number;
  workerEventFd(worker: bigint): number;
  /** Arms the wake-up fd; false when events are pending (progress first, then arm again). */
  workerArm(worker: bigint): boolean;
  /**
   * 'peer' (UCP_ERR_HANDLING_MODE_PEER): `onError`, if given, runs during progress if the peer
   * fails; UCX 1.13 then uses only transports that can detect it (tcp on one host). 'none': UCX
   * may also use transports that cannot (cma, sysv/posix shared memory); a failed peer fails
   * requests only.
   */
  epCreate(worker: bigint, peerAddress: Buffer, mode: UcpErrorMode, onError?: (status: string) => void): bigint;
  epClose(ep: bigint, force: boolean): UcpRequest;
  /** Registers memory the caller allocated. */
  memMap(context: bigint, address: bigint, length: number): bigint;
  /** UCX allocates and registers `length` bytes (as ucx_perftest does); free with memUnmap. */
  memAllocate(context: bigint, length: number): UcpAllocation;
  memUnmap(context: bigint, memh: bigint): void;
  rkeyPack(context: bigint, memh: bigint): Buffer;
  rkeyUnpack(ep: bigint, packed: Buffer): bigint;
  rkeyDestroy(rkey: bigint): void;
  /**
   * A put/get's request parameters: none (UCX then finds the local buffer's memory type and
   * registration itself on every call), or the local memory handle, and UCP_OP_ATTR_FLAG_MULTI_SEND
   * (bandwidth of many operations in flight over the latency of one) as NIXL passes them.
   */
  requestParam(memh: bigint | null, multiSend: boolean): Buffer;
  /** `param`: from requestParam; default none. */
  put(ep: bigint, local: bigint, length: number, remote: bigint, rkey: bigint, param?: Buffer): UcpRequest;
  get(ep: bigint, local: bigint, length: number, remote: bigint, rkey: bigint, param?: Buffer): UcpRequest;
  /** Completes when every put/get posted on `ep` is complete at the target too. */
  epFlush(ep: bigint): UcpRequest;
  /** 'done', 'pending', or throws the request's error. */
  requestState(request: bigint, call: string): 'done' | 'pending';
  requestFree(request: bigint): void;
  statusString(status: number): string;
}

export const ucp = lazyBinding((): Ucp => {
  // UCX's memory hooks (UCM patches mmap/munmap at run time) crash Node now and then: a SIGSEGV in
  // V8's GC right after a large mapping (2 of 9 concurrent ucx sweeps here, none of 18 without).
  // Off unless the user decided; it must be set before libucp is loaded.
  if (process.env.UCX_MEM_EVENTS === undefined) process.env.UCX_MEM_EVENTS = 'no';
  const lib = openLibrary('ucp', ['libucp.so.0', 'libucp.so']);
  const ucs = openLibrary('ucs', ['libucs.so.0', 'libucs.so']);
  const status_string = ucs.func('const char *ucs_status_string(int8_t status)');
  const errHandlerProto = namedProto('void xfer_ucp_err_handler(void *arg, void *ep, int status)');
  const f = {
    get_version_string: lib.func('const char *ucp_get_version_string(void)'),
    config_read: lib.func('int8_t ucp_config_read(const char *prefix, const char *filename, _Out_ void **config)'),
    config_modify: lib.func('int8_t ucp_config_modify(void *config, const char *name, const char *value)'),
    config_release: lib.func('void ucp_config_release(void *config)'),
    init_version: lib.func('int8_t ucp_init_version(unsigned int major, unsigned int minor, const void *params, const void *config, _Out_ void **context)'),
    cleanup: lib.func('void ucp_cleanup(void *context)'),
    worker_create: lib.func('int8_t ucp_worker_create(void *context, const void *params, _Out_ void **worker)'),
    worker_destroy: lib.func('void ucp_worker_destroy(void *worker)'),
    worker_query: lib.func('int8_t ucp_worker_query(void *worker, void *attr)'),
    worker_get_address: lib.func('int8_t ucp_worker_get_address(void *worker, _Out_ void **address, _Out_ size_t *length)'),
    worker_release_address: lib.func('void ucp_worker_release_address(void *worker, void *address)'),
    worker_progress: lib.func('unsigned int ucp_worker_progress(void *worker)'),
    worker_get_efd: lib.func('int8_t ucp_worker_get_efd(void *worker, _Out_ int *fd)'),
    worker_arm: lib.func('int8_t ucp_worker_arm(void *worker)'),
    ep_create: lib.func('int8_t ucp_ep_create(void *worker, const void *params, _Out_ void **ep)'),
    ep_close_nbx: lib.func('void *ucp_ep_close_nbx(void *ep, const void *param)'),
    ep_flush_nbx: lib.func('void *ucp_ep_flush_nbx(void *ep, const void *param)'),
    mem_map: lib.func('int8_t ucp_mem_map(void *context, const void *params, _Out_ void **memh)'),
    mem_unmap: lib.func('int8_t ucp_mem_unmap(void *context, void *memh)'),
    mem_query: lib.func('int8_t ucp_mem_query(void *memh, void *attr)'),
    rkey_pack: lib.func('int8_t ucp_rkey_pack(void *context, void *memh, _Out_ void **buffer, _Out_ size_t *size)'),
    rkey_buffer_release: lib.func('void ucp_rkey_buffer_release(void *buffer)'),
    ep_rkey_unpack: lib.func('int8_t ucp_ep_rkey_unpack(void *ep, const void *buffer, _Out_ void **rkey)'),
    rkey_destroy: lib.func('void ucp_rkey_destroy(void *rkey)'),
    put_nbx: lib.func('void *ucp_put_nbx(void *ep, const void *buffer, size_t count, uint64_t remote_addr, void *rkey, const void *param)'),
    get_nbx: lib.func('void *ucp_get_nbx(void *ep, void *buffer, size_t count, uint64_t remote_addr, void *rkey, const void *param)'),
    request_check_status: lib.func('int8_t ucp_request_check_status(void *request)'),
    request_free: lib.func('void ucp_request_free(void *request)'),
  };
  const statusString = (status: number) => status_string(status) as string;
  const check = (status: number, call: string): void => {
    if (status !== 0) throw new NativeCallError('ucx', call, status, statusString(status));
  };
  // The call's name (and bytes) only go into an error: a success costs no string.
  const requestOrNull = (p: bigint | null, call: string, bytes?: number): UcpRequest => {
    if (p === null || p === 0n) return null;
    if (p >= ERR_PTR_FLOOR) {
      const status = Number(p - (1n << 64n));
      throw new NativeCallError('ucx', bytes === undefined ? call : `${call}(${bytes} bytes)`, status, statusString(status));
    }
    return p;
  };
  const outPtr = (): [bigint | null] => [null];
  // One zeroed ucp_request_param_t (op_attr_mask = 0: no callback, poll the request) for put/get/flush.
  const plainParam = Buffer.alloc(128);
  const forceCloseParam = Buffer.alloc(128);
  forceCloseParam.writeUInt32LE(UCP_OP_ATTR_FIELD_FLAGS, 0);
  forceCloseParam.writeUInt32LE(UCP_EP_CLOSE_FLAG_FORCE, 4);
  // Endpoint error handlers by endpoint address; one registered native callback serves them all.
  const errorHandlers = new Map<bigint, (status: string) => void>();
  const errHandler = koffi.register((_arg: unknown, ep: bigint | null, status: number) => {
    errorHandlers.get(ep ?? 0n)?.(statusString(status));
  }, koffi.pointer(errHandlerProto));

  return {
    versionString: () => f.get_version_string() as string,
    init(overrides = {}) {
      const { apply, environment, userReplaced } = planUcxDefaults(process.env, overrides, hasRdmaDevice());
      for (const [name, value] of environment) process.env[`UCX_${name}`] = value;
      const cfg = outPtr();
      check(f.config_read(null, null, cfg), 'ucp_config_read');
      try {
        const skippedDefaults: string[] = [];
        for (const [name, value] of apply) {
          if (f.config_modify(cfg[0], name, value) !== 0) skippedDefaults.push(`${name}=${value}`);
        }
        for (const [name, value] of Object.entries(overrides)) {
          check(f.config_modify(cfg[0], name, value), `ucp_config_modify(${name}=${value})`);
        }
        const params = Buffer.alloc(128); // ucp_params_t: field_mask @0, features @8
        params.writeBigUInt64LE(UCP_PARAM_FIELD_FEATURES, 0);
        params.writeBigUInt64LE(UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, 8);
        const ctx = outPtr();
        check(f.init_version(1, 10, params, cfg[0], ctx), 'ucp_init');
        return { context: ctx[0]!, skippedDefaults, userReplaced };
      } finally {
        f.config_release(cfg[0]);
      }
    },
    cleanup: (context) => f.cleanup(context),
    workerCreate(context, threads = 'single') {
      const params = Buffer.alloc(256); // ucp_worker_params_t: field_mask @0, thread_mode @8
      params.writeBigUInt64LE(UCP_WORKER_PARAM_FIELD_THREAD_MODE, 0);
      params.writeInt32LE(threads === 'multi' ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE, 8);
      const worker = outPtr();
      check(f.worker_create(context, params, worker), 'ucp_worker_create');
      if (threads === 'multi') {
        const attr = Buffer.alloc(256); // ucp_worker_attr_t: field_mask @0, thread_mode @8
        attr.writeBigUInt64LE(UCP_WORKER_ATTR_FIELD_THREAD_MODE, 0);
        check(f.worker_query(worker[0]!, attr), 'ucp_worker_query');
        if (attr.readInt32LE(8) !== UCS_THREAD_MODE_MULTI) {
          f.worker_destroy(worker[0]!);
          throw new NativeCallError('ucx', 'ucp_worker_create(UCS_THREAD_MODE_MULTI)', 0, 'this UCX does not support multi-threading (built without --enable-mt), so no progress thread can share its worker');
        }
      }
      return worker[0]!;
    },
    workerDestroy: (worker) => f.worker_destroy(worker),
    workerAddress(worker) {
      const addr = outPtr();
      const len = [0];
      check(f.worker_get_address(worker, addr, len), 'ucp_worker_get_address');
      const copy = Buffer.from(koffi.view(addr[0], Number(len[0])).slice(0));
      f.worker_release_address(worker, addr[0]);
      return copy;
    },
    workerProgress: (worker) => f.worker_progress(worker) as number,
    workerEventFd(worker) {
      const fd = [0];
      check(f.worker_get_efd(worker, fd), 'ucp_worker_get_efd');
      return fd[0];
    },
    workerArm(worker) {
      const status = f.worker_arm(worker) as number;
      if (status === UCS_ERR_BUSY) return false;
      check(status, 'ucp_worker_arm');
      return true;
    },
    epCreate(worker, peerAddress, mode, onError) {
      const params = Buffer.alloc(256); // ucp_ep_params_t: field_mask @0, address @8, err_mode @16, err_handler {cb @24, arg @32}
      const handled = onError ? UCP_EP_PARAM_FIELD_ERR_HANDLER : 0n;
      params.writeBigUInt64LE(UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | handled, 0);
      params.writeBigUInt64LE(koffi.address(peerAddress), 8);
      params.writeInt32LE(mode === 'peer' ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE, 16);
      if (onError) params.writeBigUInt64LE(errHandler, 24);
      const ep = outPtr();
      check(f.ep_create(worker, params, ep), 'ucp_ep_create');
      if (onError) errorHandlers.set(ep[0]!, onError);
      return ep[0]!;
    },
    epClose(ep, force) {
      errorHandlers.delete(ep);
      return requestOrNull(f.ep_close_nbx(ep, force ? forceCloseParam : plainParam), 'ucp_ep_close_nbx');
    },
    memMap(context, address, length) {
      const params = Buffer.alloc(128); // ucp_mem_map_params_t: field_mask @0, address @8, length @16
      params.writeBigUInt64LE(UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH, 0);
      params.writeBigUInt64LE(address, 8);
      params.writeBigUInt64LE(BigInt(length), 16);
      const memh = outPtr();
      check(f.mem_map(context, params, memh), `ucp_mem_map(${length} bytes)`);
      return memh[0]!;
    },
    memAllocate(context, length) {
      const params = Buffer.alloc(128); // ucp_mem_map_params_t: field_mask @0, address @8, length @16, flags @24
      params.writeBigUInt64LE(UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS, 0);
      params.writeBigUInt64LE(BigInt(length), 16);
      params.writeUInt32LE(UCP_MEM_MAP_ALLOCATE, 24);
      const memh = outPtr();
      check(f.mem_map(context, params, memh), `ucp_mem_map(allocate ${length} bytes)`);
      const attr = Buffer.alloc(64); // ucp_mem_attr_t: field_mask @0, address @8, length @16
      attr.writeBigUInt64LE(UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH, 0);
      const status = f.mem_query(memh[0], attr) as number;
      if (status !== 0) {
        f.mem_unmap(context, memh[0]);
        check(status, 'ucp_mem_query');
      }
      return { memh: memh[0]!, address: attr.readBigUInt64LE(8), length: Number(attr.readBigUInt64LE(16)) };
    },
    memUnmap: (context, memh) => check(f.mem_unmap(context, memh), 'ucp_mem_unmap'),
    rkeyPack(context, memh) {
      const buf = outPtr();
      const size = [0];
      check(f.rkey_pack(context, memh, buf, size), 'ucp_rkey_pack');
      const copy = Buffer.from(koffi.view(buf[0], Number(size[0])).slice(0));
      f.rkey_buffer_release(buf[0]);
      return copy;
    },
    rkeyUnpack(ep, packed) {
      const rkey = outPtr();
      check(f.ep_rkey_unpack(ep, packed, rkey), 'ucp_ep_rkey_unpack');
      return rkey[0]!;
    },
    rkeyDestroy: (rkey) => f.rkey_destroy(rkey),
    requestParam(memh, multiSend) {
      if (memh === null && !multiSend) return plainParam;
      const param = Buffer.alloc(128);
      param.writeUInt32LE((memh === null ? 0 : UCP_OP_ATTR_FIELD_MEMH) | (multiSend ? UCP_OP_ATTR_FLAG_MULTI_SEND : 0), 0);
      if (memh !== null) param.writeBigUInt64LE(memh, REQUEST_PARAM_MEMH_OFFSET);
      return param;
    },
    put: (ep, local, length, remote, rkey, param = plainParam) => requestOrNull(f.put_nbx(ep, local, length, remote, rkey, param), 'ucp_put_nbx', length),
    get: (ep, local, length, remote, rkey, param = plainParam) => requestOrNull(f.get_nbx(ep, local, length, remote, rkey, param), 'ucp_get_nbx', length),
    epFlush: (ep) => requestOrNull(f.ep_flush_nbx(ep, plainParam), 'ucp_ep_flush_nbx'),
    requestState(request, call) {
      const status = f.request_check_status(request) as number;
      if (status === 1) return 'pending'; // UCS_INPROGRESS
      check(status, call);
      return 'done';
    },
    requestFree: (request) => f.request_free(request),
    statusString,
  };
});
