// libcuda (the CUDA driver API) through koffi: what the runtime does not offer for kernels compiled
// at run time: loading a CUBIN/PTX image (cuModuleLoadData; the driver JITs PTX), finding a kernel,
// occupancy, and cuLaunchKernel. It works in the runtime's primary context, so runtime streams and
// memory serve as they are. Loaded lazily: importing this module on a machine without CUDA is fine.
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary, optionalFunc } from './load.ts';

const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
const CU_STREAM_WAIT_VALUE_GEQ = 0;
/** A memory barrier before the write: work queued before it is done and visible first. */
const CU_STREAM_WRITE_VALUE_DEFAULT = 0;

export interface LaunchConfig {
  blocks: number;
  threads: number;
  /** A runtime stream (cudaStream_t and CUstream are the same handle). */
  stream: bigint;
  /**
   * Address of the kernel's argument table: one pointer per argument, each to the argument's value
   * (cuLaunchKernel's kernelParams). The driver copies the values at launch, so the table may be
   * rewritten for the next launch at once.
   */
  params: bigint;
}

export interface CudaDriver {
  driverVersion(): number;
  /** [major, minor] compute capability of a device (ordinal as the runtime numbers it). */
  computeCapability(device: number): [number, number];
  multiprocessors(device: number): number;
  /** Makes the device's primary context (the runtime's) current on this thread. */
  usePrimaryContext(device: number): void;
  /** Loads a CUBIN or NUL-terminated PTX image into the current context. */
  moduleLoad(image: Buffer): bigint;
  moduleUnload(module: bigint): void;
  /** An `extern "C"` kernel of a loaded module. */
  kernel(module: bigint, name: string): bigint;
  /** Blocks of `threads` threads that fit on one multiprocessor at once. */
  maxBlocksPerMultiprocessor(kernel: bigint, threads: number): number;
  launch(kernel: bigint, config: LaunchConfig): void;
  /**
   * Stream memory operations (no kernel: the GPU's front end does them in stream order): write a
   * 32-bit value to device memory (this GPU's or a peer's, through an IPC or peer mapping), and
   * hold the stream until a 32-bit word reaches at least a value.
   */
  streamWriteValue32(stream: bigint, address: bigint, value: number): void;
  streamWaitValue32(stream: bigint, address: bigint, value: number): void;
}

export const cudaDriver = lazyBinding((): CudaDriver => {
  const lib = openLibrary('cuda', ['libcuda.so.1', 'libcuda.so']);
  const f = {
    get_error_name: lib.func('int cuGetErrorName(int error, _Out_ const char **name)'),
    get_error_string: lib.func('int cuGetErrorString(int error, _Out_ const char **text)'),
    init: lib.func('int cuInit(unsigned int flags)'),
    driver_get_version: lib.func('int cuDriverGetVersion(_Out_ int *version)'),
    device_get: lib.func('int cuDeviceGet(_Out_ int *device, int ordinal)'),
    device_get_attribute: lib.func('int cuDeviceGetAttribute(_Out_ int *value, int attribute, int device)'),
    primary_ctx_retain: lib.func('int cuDevicePrimaryCtxRetain(_Out_ void **ctx, int device)'),
    ctx_set_current: lib.func('int cuCtxSetCurrent(void *ctx)'),
    module_load_data: lib.func('int cuModuleLoadData(_Out_ void **module, const void *image)'),
    module_unload: lib.func('int cuModuleUnload(void *module)'),
    module_get_function: lib.func('int cuModuleGetFunction(_Out_ void **fn, void *module, const char *name)'),
    occupancy: lib.func('int cuOccupancyMaxActiveBlocksPerMultiprocessor(_Out_ int *blocks, void *fn, int blockSize, size_t dynamicSmem)'),
    launch_kernel: lib.func(
      'int cuLaunchKernel(void *fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz, unsigned int sharedMem, void *stream, void *params, void *extra)',
    ),
  };
  // CUDA 12 and later export the stream memory operations as *_v2 (the names without it are the
  // CUDA 11 forms); either takes the same arguments.
  const streamOp = (name: string, args: string) =>
    optionalFunc(lib, `int ${name}_v2(${args})`) ?? optionalFunc(lib, `int ${name}(${args})`);
  const writeValue32 = streamOp('cuStreamWriteValue32', 'void *stream, uint64_t addr, uint32_t value, unsigned int flags');
  const waitValue32 = streamOp('cuStreamWaitValue32', 'void *stream, uint64_t addr, uint32_t value, unsigned int flags');
  const check = (rc: number, call: string): void => {
    if (rc === 0) return;
    const name: [string | null] = [null];
    const text: [string | null] = [null];
    f.get_error_name(rc, name);
    f.get_error_string(rc, text);
    throw new NativeCallError('cuda driver', call, rc, `${name[0] ?? 'unknown error'}: ${text[0] ?? 'no description'}`);
  };
  check(f.init(0), 'cuInit');
  const deviceHandle = (ordinal: number): number => {
    const d = [0];
    check(f.device_get(d, ordinal), `cuDeviceGet(${ordinal})`);
    return d[0];
  };
  const attribute = (device: number, attr: number, what: string): number => {
    const v = [0];
    check(f.device_get_attribute(v, attr, deviceHandle(device)), `cuDeviceGetAttribute(${what}, device ${device})`);
    return v[0];
  };
  const primary = new Map<number, bigint>();
  return {
    driverVersion() {
      const v = [0];
      check(f.driver_get_version(v), 'cuDriverGetVersion');
      return v[0];
    },
    computeCapability: (device) => [
      attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 'compute capability major'),
      attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 'compute capability minor'),
    ],
    multiprocessors: (device) => attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 'multiprocessor count'),
    usePrimaryContext(device) {
      let ctx = primary.get(device);
      if (ctx === undefined) {
        const out: [bigint | null] = [null];
        check(f.primary_ctx_retain(out, deviceHandle(device)), `cuDevicePrimaryCtxRetain(${device})`);
        ctx = out[0]!;
        primary.set(device, ctx); // held for the process's life, as the runtime holds it
      }
      check(f.ctx_set_current(ctx), `cuCtxSetCurrent(device ${device})`);
    },
    moduleLoad(image) {
      const out: [bigint | null] = [null];
      check(f.module_load_data(out, image), `cuModuleLoadData(${image.length} bytes)`);
      return out[0]!;
    },
    moduleUnload: (module) => check(f.module_unload(module), 'cuModuleUnload'),
    kernel(module, name) {
      const out: [bigint | null] = [null];
      check(f.module_get_function(out, module, name), `cuModuleGetFunction(${name})`);
      return out[0]!;
    },
    maxBlocksPerMultiprocessor(kernel, threads) {
      const n = [0];
      check(f.occupancy(n, kernel, threads, 0), `cuOccupancyMaxActiveBlocksPerMultiprocessor(${threads} threads)`);
      return n[0];
    },
    launch(kernel, c) {
      check(f.launch_kernel(kernel, c.blocks, 1, 1, c.threads, 1, 1, 0, c.stream, c.params, null), `cuLaunchKernel(${c.blocks} x ${c.threads})`);
    },
    streamWriteValue32(stream, address, value) {
      if (!writeValue32) throw new NativeCallError('cuda driver', 'cuStreamWriteValue32', 1, 'this libcuda has no stream memory operations');
      check(writeValue32(stream, address, value, CU_STREAM_WRITE_VALUE_DEFAULT), 'cuStreamWriteValue32');
    },
    streamWaitValue32(stream, address, value) {
      if (!waitValue32) throw new NativeCallError('cuda driver', 'cuStreamWaitValue32', 1, 'this libcuda has no stream memory operations');
      check(waitValue32(stream, address, value, CU_STREAM_WAIT_VALUE_GEQ), 'cuStreamWaitValue32');
    },
  };
});
