// The CUDA driver's virtual memory management (libcuda through koffi), only what VMM allocations
// need (nixlbench's --enable_vmm): granularity, cuMemCreate / cuMemAddressReserve / cuMemMap /
// cuMemSetAccess, their undoing, and POSIX-fd shareable handles so same-node peers can map the
// allocation. Every call's CUresult is checked. It runs on the primary context that the CUDA
// runtime made current (cudaSetDevice), so runtime and driver calls see the same memory.
import koffi from 'koffi';
import { namedStruct } from './named-type.ts';
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary } from './load.ts';

const CUDA_SUCCESS = 0;
const CU_MEM_ALLOCATION_TYPE_PINNED = 1;
const CU_MEM_LOCATION_TYPE_DEVICE = 1;
const CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3;
const CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0;
export const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1;
export const CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102;
export const CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103;
export const CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110;

export interface VmmProps {
  device: number;
  /** Allow exporting the allocation as a POSIX file descriptor (same-node peers). */
  posixFd: boolean;
  /** Ask for GPUDirect RDMA capability (as nixlbench does), where the device supports it. */
  gpuDirectRdma: boolean;
}

export interface CudaVmm {
  deviceAttribute(device: number, attribute: number): number;
  granularity(props: VmmProps): number;
  /** cuMemCreate: the physical allocation's handle. */
  create(bytes: number, props: VmmProps): bigint;
  /** cuMemAddressReserve: a virtual range aligned to `alignment`. */
  reserve(bytes: number, alignment: number): bigint;
  map(address: bigint, bytes: number, handle: bigint): void;
  /** Read-write access for `device` to [address, address + bytes). */
  setAccess(address: bigint, bytes: number, device: number): void;
  unmap(address: bigint, bytes: number): void;
  release(handle: bigint): void;
  addressFree(address: bigint, bytes: number): void;
  /** The allocation as a new POSIX file descriptor (owned by the caller). */
  exportFd(handle: bigint): number;
  /** An allocation handle from a POSIX file descriptor of this process (the fd stays the caller's). */
  importFd(fd: number): bigint;
}

export const cudaVmm = lazyBinding((): CudaVmm => {
  const lib = openLibrary('cuda', ['libcuda.so.1', 'libcuda.so']);
  const Location = namedStruct('xfer_CUmemLocation', { type: 'int', id: 'int' });
  const AllocFlags = namedStruct('xfer_CUmemAllocFlags', {
    compressionType: 'uint8_t',
    gpuDirectRDMACapable: 'uint8_t',
    usage: 'uint16_t',
    reserved: koffi.array('uint8_t', 4),
  });
  const Prop = namedStruct('xfer_CUmemAllocationProp', {
    type: 'int',
    requestedHandleTypes: 'int',
    location: Location,
    win32HandleMetaData: 'void *',
    allocFlags: AllocFlags,
  });
  const Access = namedStruct('xfer_CUmemAccessDesc', { location: Location, flags: 'int' });
  const f = {
    init: lib.func('int cuInit(unsigned int flags)'),
    error_string: lib.func('int cuGetErrorString(int error, _Out_ const char **str)'),
    device_get_attribute: lib.func('int cuDeviceGetAttribute(_Out_ int *value, int attribute, int device)'),
    granularity: lib.func('cuMemGetAllocationGranularity', 'int', [koffi.out(koffi.pointer('size_t')), koffi.pointer(Prop), 'int']),
    create: lib.func('cuMemCreate', 'int', [koffi.out(koffi.pointer('uint64_t')), 'size_t', koffi.pointer(Prop), 'uint64_t']),
    reserve: lib.func('int cuMemAddressReserve(_Out_ uint64_t *ptr, size_t size, size_t alignment, uint64_t addr, uint64_t flags)'),
    map: lib.func('int cuMemMap(uint64_t ptr, size_t size, size_t offset, uint64_t handle, uint64_t flags)'),
    set_access: lib.func('cuMemSetAccess', 'int', ['uint64_t', 'size_t', koffi.pointer(Access), 'size_t']),
    unmap: lib.func('int cuMemUnmap(uint64_t ptr, size_t size)'),
    release: lib.func('int cuMemRelease(uint64_t handle)'),
    address_free: lib.func('int cuMemAddressFree(uint64_t ptr, size_t size)'),
    export_fd: lib.func('int cuMemExportToShareableHandle(_Out_ int *fd, uint64_t handle, int handleType, uint64_t flags)'),
    // For a POSIX fd, the "OS handle" argument is the descriptor's value itself, passed as a pointer.
    import_handle: lib.func('int cuMemImportFromShareableHandle(_Out_ uint64_t *handle, uintptr_t osHandle, int handleType)'),
  };
  const check = (rc: number, call: string) => {
    if (rc === CUDA_SUCCESS) return;
    const text = [null];
    const detail = f.error_string(rc, text) === CUDA_SUCCESS && text[0] ? String(text[0]) : 'unknown CUDA driver error';
    throw new NativeCallError('cuda driver', call, rc, detail);
  };
  check(f.init(0), 'cuInit');
  const prop = (p: VmmProps) => ({
    type: CU_MEM_ALLOCATION_TYPE_PINNED,
    requestedHandleTypes: p.posixFd ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0,
    location: { type: CU_MEM_LOCATION_TYPE_DEVICE, id: p.device },
    win32HandleMetaData: null,
    allocFlags: { compressionType: 0, gpuDirectRDMACapable: p.gpuDirectRdma ? 1 : 0, usage: 0, reserved: [0, 0, 0, 0] },
  });
  const out = () => [0n] as [bigint | number];
  return {
    deviceAttribute(device, attribute) {
      const value = [0];
      check(f.device_get_attribute(value, attribute, device), `cuDeviceGetAttribute(${attribute}, device ${device})`);
      return value[0];
    },
    granularity(p) {
      const g = out();
      check(f.granularity(g, prop(p), CU_MEM_ALLOC_GRANULARITY_MINIMUM), `cuMemGetAllocationGranularity(device ${p.device})`);
      return Number(g[0]);
    },
    create(bytes, p) {
      const h = out();
      check(f.create(h, bytes, prop(p), 0), `cuMemCreate(${bytes} bytes, device ${p.device})`);
      return BigInt(h[0]);
    },
    reserve(bytes, alignment) {
      const a = out();
      check(f.reserve(a, bytes, alignment, 0, 0), `cuMemAddressReserve(${bytes} bytes)`);
      return BigInt(a[0]);
    },
    map: (address, bytes, handle) => check(f.map(address, bytes, 0, handle, 0), `cuMemMap(0x${address.toString(16)}, ${bytes} bytes)`),
    setAccess: (address, bytes, device) =>
      check(
        f.set_access(address, bytes, { location: { type: CU_MEM_LOCATION_TYPE_DEVICE, id: device }, flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE }, 1),
        `cuMemSetAccess(0x${address.toString(16)}, ${bytes} bytes, device ${device})`,
      ),
    unmap: (address, bytes) => check(f.unmap(address, bytes), `cuMemUnmap(0x${address.toString(16)})`),
    release: (handle) => check(f.release(handle), 'cuMemRelease'),
    addressFree: (address, bytes) => check(f.address_free(address, bytes), `cuMemAddressFree(0x${address.toString(16)})`),
    exportFd(handle) {
      const fd = [0];
      check(f.export_fd(fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0), 'cuMemExportToShareableHandle(POSIX fd)');
      return fd[0];
    },
    importFd(fd) {
      const h = out();
      check(f.import_handle(h, fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), `cuMemImportFromShareableHandle(fd ${fd})`);
      return BigInt(h[0]);
    },
  };
});
