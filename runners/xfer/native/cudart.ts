// libcudart (CUDA runtime) through koffi: devices, device memory, streams, events, peer copies and
// IPC handles. Loaded lazily: importing this module on a machine without CUDA is fine.
import koffi from 'koffi';
import { namedStruct } from './named-type.ts';
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary } from './load.ts';
import { cudaLibraryCandidates } from './cuda-paths.ts';

export const cudaMemcpyHostToDevice = 1;
export const cudaMemcpyDeviceToHost = 2;
export const cudaMemcpyDeviceToDevice = 3;
/** Direction inferred from the pointers (unified addressing); right for IPC-opened peer memory. */
export const cudaMemcpyDefault = 4;
const cudaErrorNotReady = 600;
const cudaErrorPeerAccessAlreadyEnabled = 704;
const cudaStreamNonBlocking = 1;
const cudaEventDisableTiming = 2;
const cudaIpcMemLazyEnablePeerAccess = 1;
export const CUDA_IPC_HANDLE_BYTES = 64;

export interface Cudart {
  runtimeVersion(): number;
  deviceCount(): number;
  /** PCI bus id of a device as CUDA numbers it (CUDA_VISIBLE_DEVICES applies), e.g. '0000:1B:00.0'. */
  pciBusId(device: number): string;
  setDevice(device: number): void;
  getDevice(): number;
  malloc(bytes: number): bigint;
  free(ptr: bigint): void;
  mallocHost(bytes: number): bigint;
  freeHost(ptr: bigint): void;
  memcpy(dst: bigint | Buffer, src: bigint | Buffer, bytes: number, kind: number): void;
  memcpyAsync(dst: bigint, src: bigint, bytes: number, kind: number, stream: bigint): void;
  memcpyPeerAsync(dst: bigint, dstDevice: number, src: bigint, srcDevice: number, bytes: number, stream: bigint): void;
  memset(ptr: bigint, byte: number, bytes: number): void;
  deviceSynchronize(): void;
  streamCreate(): bigint;
  streamDestroy(stream: bigint): void;
  streamSynchronize(stream: bigint): void;
  /** Events for completion only (cheapest) unless `timing` is set. */
  eventCreate(timing?: boolean): bigint;
  eventDestroy(event: bigint): void;
  eventRecord(event: bigint, stream: bigint): void;
  /** Work queued on `stream` after this waits (on the GPU) for the event's latest record. */
  streamWaitEvent(stream: bigint, event: bigint): void;
  /** True when the work before the event is done; never blocks. */
  eventDone(event: bigint): boolean;
  eventElapsedMs(start: bigint, end: bigint): number;
  canAccessPeer(device: number, peer: number): boolean;
  /** Enables access from the current device to `peer`; already enabled is fine. */
  enablePeerAccess(peer: number): void;
  /** The 64 raw bytes of a cudaIpcMemHandle_t for memory from cudaMalloc. */
  ipcGetMemHandle(ptr: bigint): Buffer;
  ipcOpenMemHandle(handle: Uint8Array): bigint;
  ipcCloseMemHandle(ptr: bigint): void;
}

export const cudart = lazyBinding((): Cudart => {
  const lib = openLibrary('cudart', cudaLibraryCandidates(['libcudart.so.13', 'libcudart.so.12', 'libcudart.so.11.0', 'libcudart.so']));
  // Passed by value (64 bytes, in memory per the SysV ABI). uint8_t, not char: koffi turns char
  // arrays into strings, which cuts the handle at its first zero byte.
  const IpcHandle = namedStruct('xfer_cudaIpcMemHandle_t', { reserved: koffi.array('uint8_t', CUDA_IPC_HANDLE_BYTES) });
  const f = {
    get_error_string: lib.func('const char *cudaGetErrorString(int error)'),
    get_error_name: lib.func('const char *cudaGetErrorName(int error)'),
    runtime_get_version: lib.func('int cudaRuntimeGetVersion(_Out_ int *version)'),
    get_device_count: lib.func('int cudaGetDeviceCount(_Out_ int *count)'),
    device_get_pci_bus_id: lib.func('int cudaDeviceGetPCIBusId(_Out_ uint8_t *busId, int len, int device)'),
    set_device: lib.func('int cudaSetDevice(int device)'),
    get_device: lib.func('int cudaGetDevice(_Out_ int *device)'),
    malloc: lib.func('int cudaMalloc(_Out_ void **ptr, size_t size)'),
    free: lib.func('int cudaFree(void *ptr)'),
    malloc_host: lib.func('int cudaMallocHost(_Out_ void **ptr, size_t size)'),
    free_host: lib.func('int cudaFreeHost(void *ptr)'),
    memcpy: lib.func('int cudaMemcpy(void *dst, const void *src, size_t count, int kind)'),
    memcpy_async: lib.func('int cudaMemcpyAsync(void *dst, const void *src, size_t count, int kind, void *stream)'),
    memcpy_peer_async: lib.func('int cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count, void *stream)'),
    memset: lib.func('int cudaMemset(void *ptr, int value, size_t count)'),
    device_synchronize: lib.func('int cudaDeviceSynchronize(void)'),
    stream_create_with_flags: lib.func('int cudaStreamCreateWithFlags(_Out_ void **stream, unsigned int flags)'),
    stream_destroy: lib.func('int cudaStreamDestroy(void *stream)'),
    stream_synchronize: lib.func('int cudaStreamSynchronize(void *stream)'),
    event_create_with_flags: lib.func('int cudaEventCreateWithFlags(_Out_ void **event, unsigned int flags)'),
    event_destroy: lib.func('int cudaEventDestroy(void *event)'),
    event_record: lib.func('int cudaEventRecord(void *event, void *stream)'),
    stream_wait_event: lib.func('int cudaStreamWaitEvent(void *stream, void *event, unsigned int flags)'),
    event_query: lib.func('int cudaEventQuery(void *event)'),
    event_elapsed_time: lib.func('int cudaEventElapsedTime(_Out_ float *ms, void *start, void *end)'),
    device_can_access_peer: lib.func('int cudaDeviceCanAccessPeer(_Out_ int *can, int device, int peer)'),
    device_enable_peer_access: lib.func('int cudaDeviceEnablePeerAccess(int peer, unsigned int flags)'),
    get_last_error: lib.func('int cudaGetLastError(void)'),
    ipc_get_mem_handle: lib.func('cudaIpcGetMemHandle', 'int', [koffi.out(koffi.pointer(IpcHandle)), 'void *']),
    ipc_open_mem_handle: lib.func('cudaIpcOpenMemHandle', 'int', [koffi.out(koffi.pointer('void *')), IpcHandle, 'unsigned int']),
    ipc_close_mem_handle: lib.func('int cudaIpcCloseMemHandle(void *ptr)'),
  };
  const check = (rc: number, call: string): void => {
    if (rc !== 0) {
      throw new NativeCallError('cudart', call, rc, `${f.get_error_name(rc) as string}: ${f.get_error_string(rc) as string}`);
    }
  };
  const outPtr = (): [bigint | null] => [null];
  const outInt = (): [number] => [0];
  return {
    runtimeVersion() {
      const v = outInt();
      check(f.runtime_get_version(v), 'cudaRuntimeGetVersion');
      return v[0];
    },
    deviceCount() {
      const n = outInt();
      check(f.get_device_count(n), 'cudaGetDeviceCount');
      return n[0];
    },
    pciBusId(device) {
      const id = Buffer.alloc(64);
      check(f.device_get_pci_bus_id(id, id.length, device), `cudaDeviceGetPCIBusId(${device})`);
      return id.toString('utf8', 0, Math.max(0, id.indexOf(0)));
    },
    setDevice: (device) => check(f.set_device(device), `cudaSetDevice(${device})`),
    getDevice() {
      const d = outInt();
      check(f.get_device(d), 'cudaGetDevice');
      return d[0];
    },
    malloc(bytes) {
      const p = outPtr();
      check(f.malloc(p, bytes), `cudaMalloc(${bytes})`);
      return p[0]!;
    },
    free: (ptr) => check(f.free(ptr), 'cudaFree'),
    mallocHost(bytes) {
      const p = outPtr();
      check(f.malloc_host(p, bytes), `cudaMallocHost(${bytes})`);
      return p[0]!;
    },
    freeHost: (ptr) => check(f.free_host(ptr), 'cudaFreeHost'),
    memcpy: (dst, src, bytes, kind) => check(f.memcpy(dst, src, bytes, kind), `cudaMemcpy(${bytes}, kind ${kind})`),
    memcpyAsync: (dst, src, bytes, kind, stream) =>
      check(f.memcpy_async(dst, src, bytes, kind, stream), `cudaMemcpyAsync(${bytes}, kind ${kind})`),
    memcpyPeerAsync: (dst, dstDevice, src, srcDevice, bytes, stream) =>
      check(f.memcpy_peer_async(dst, dstDevice, src, srcDevice, bytes, stream), `cudaMemcpyPeerAsync(${bytes}, ${srcDevice}->${dstDevice})`),
    memset: (ptr, byte, bytes) => check(f.memset(ptr, byte, bytes), `cudaMemset(${bytes})`),
    deviceSynchronize: () => check(f.device_synchronize(), 'cudaDeviceSynchronize'),
    streamCreate() {
      const s = outPtr();
      check(f.stream_create_with_flags(s, cudaStreamNonBlocking), 'cudaStreamCreateWithFlags');
      return s[0]!;
    },
    streamDestroy: (stream) => check(f.stream_destroy(stream), 'cudaStreamDestroy'),
    streamSynchronize: (stream) => check(f.stream_synchronize(stream), 'cudaStreamSynchronize'),
    eventCreate(timing = false) {
      const e = outPtr();
      check(f.event_create_with_flags(e, timing ? 0 : cudaEventDisableTiming), 'cudaEventCreateWithFlags');
      return e[0]!;
    },
    eventDestroy: (event) => check(f.event_destroy(event), 'cudaEventDestroy'),
    eventRecord: (event, stream) => check(f.event_record(event, stream), 'cudaEventRecord'),
    streamWaitEvent: (stream, event) => check(f.stream_wait_event(stream, event, 0), 'cudaStreamWaitEvent'),
    eventDone(event) {
      const rc = f.event_query(event) as number;
      if (rc === cudaErrorNotReady) return false;
      check(rc, 'cudaEventQuery');
      return true;
    },
    eventElapsedMs(start, end) {
      const ms = [0];
      check(f.event_elapsed_time(ms, start, end), 'cudaEventElapsedTime');
      return ms[0];
    },
    canAccessPeer(device, peer) {
      const can = outInt();
      check(f.device_can_access_peer(can, device, peer), `cudaDeviceCanAccessPeer(${device}, ${peer})`);
      return can[0] !== 0;
    },
    enablePeerAccess(peer) {
      const rc = f.device_enable_peer_access(peer, 0) as number;
      if (rc === cudaErrorPeerAccessAlreadyEnabled) {
        f.get_last_error(); // recorded as the last error until read: clear it
        return;
      }
      check(rc, `cudaDeviceEnablePeerAccess(${peer})`);
    },
    ipcGetMemHandle(ptr) {
      const handle: { reserved?: Uint8Array } = {};
      check(f.ipc_get_mem_handle(handle, ptr), 'cudaIpcGetMemHandle');
      return Buffer.from(handle.reserved!);
    },
    ipcOpenMemHandle(handle) {
      if (handle.length !== CUDA_IPC_HANDLE_BYTES) {
        throw new NativeCallError('cudart', 'cudaIpcOpenMemHandle', 1, `handle is ${handle.length} bytes, not ${CUDA_IPC_HANDLE_BYTES}`);
      }
      const p = outPtr();
      check(f.ipc_open_mem_handle(p, { reserved: new Uint8Array(handle) }, cudaIpcMemLazyEnablePeerAccess), 'cudaIpcOpenMemHandle');
      return p[0]!;
    },
    ipcCloseMemHandle: (ptr) => check(f.ipc_close_mem_handle(ptr), 'cudaIpcCloseMemHandle'),
  };
});
