// GPU regions allocated through CUDA's virtual memory management (nixlbench's --enable_vmm):
// cuMemCreate a physical allocation padded to the device's granularity, reserve an address range,
// map it and grant this device read-write access. cudaIpcGetMemHandle does not work on such memory,
// so same-node peers reach it through a POSIX file descriptor of the allocation: the owner exports
// one, a peer duplicates it into its own process (pidfd_getfd), imports, maps and sets access.
// nixlbench asks for FABRIC handles (multi-node NVLink); POSIX fds are what one node needs.
import { XferError } from './errors.ts';
import { gpuRegion, type Region, type RegionDescriptor } from './memory.ts';
import { cudart } from './native/cudart.ts';
import {
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
  cudaVmm,
  type VmmProps,
} from './native/cuda-vmm.ts';
import { libc } from './native/libc.ts';

/** Rounds `bytes` up to a multiple of `granularity` (at least one). */
export function paddedSize(bytes: number, granularity: number): number {
  return Math.max(1, Math.ceil(bytes / granularity)) * granularity;
}

function propsFor(device: number): VmmProps {
  const vmm = cudaVmm();
  if (!vmm.deviceAttribute(device, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)) {
    throw new XferError(`--enable_vmm: GPU ${device} does not support CUDA virtual memory management`);
  }
  return {
    device,
    posixFd: vmm.deviceAttribute(device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) === 1,
    gpuDirectRdma: vmm.deviceAttribute(device, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) === 1,
  };
}

/** Maps `handle` at a fresh address range with read-write access for `device`; returns the address. */
function mapHandle(handle: bigint, padded: number, granularity: number, device: number): bigint {
  const vmm = cudaVmm();
  const address = vmm.reserve(padded, granularity);
  try {
    vmm.map(address, padded, handle);
    try {
      vmm.setAccess(address, padded, device);
    } catch (err) {
      vmm.unmap(address, padded);
      throw err;
    }
  } catch (err) {
    vmm.addressFree(address, padded);
    throw err;
  }
  return address;
}

/** A GPU region on `device` from cuMemCreate + cuMemMap, exportable to same-node peers as a POSIX fd. */
export function allocateVmmGpu(name: string, size: number, device: number, owner: { rank: number; node: string }): Region {
  cudart().setDevice(device); // the primary context the driver calls run on
  const vmm = cudaVmm();
  const props = propsFor(device);
  const granularity = vmm.granularity(props);
  const padded = paddedSize(size, granularity);
  const handle = vmm.create(padded, props);
  let address: bigint;
  try {
    address = mapHandle(handle, padded, granularity, device);
  } catch (err) {
    vmm.release(handle);
    throw err;
  }
  let fd: number | undefined;
  const exported = () => {
    if (!props.posixFd) throw new XferError(`--enable_vmm: GPU ${device} cannot export VMM allocations as POSIX file descriptors, so peers cannot map region '${name}'`);
    fd ??= vmm.exportFd(handle);
    return { ipc: Buffer.alloc(0), vmm: { pid: process.pid, fd, paddedBytes: padded } };
  };
  return gpuRegion(name, size, address, device, owner, exported, () => {
    cudart().setDevice(device);
    vmm.unmap(address, padded);
    vmm.addressFree(address, padded);
    vmm.release(handle);
    if (fd !== undefined) libc().close(fd);
  });
}

/** Maps a same-node peer's VMM region into this process for `device`; close() unmaps it. */
export function openPeerVmm(descriptor: Extract<RegionDescriptor, { kind: 'gpu' }>, device: number): { address: bigint; close(): void } {
  const exported = descriptor.vmm!;
  const vmm = cudaVmm();
  let fd: number;
  try {
    fd = libc().pidfdGetFd(exported.pid, exported.fd);
  } catch (err) {
    throw new XferError(
      `--enable_vmm: cannot take rank ${descriptor.rank}'s VMM allocation '${descriptor.name}' into this process (${(err as Error).message}): ` +
        'pidfd_getfd needs Linux 5.6 and permission to trace the peer (same user, ptrace not restricted)',
    );
  }
  let handle: bigint;
  try {
    handle = vmm.importFd(fd);
  } finally {
    libc().close(fd);
  }
  const granularity = vmm.granularity({ device, posixFd: true, gpuDirectRdma: false });
  let address: bigint;
  try {
    address = mapHandle(handle, exported.paddedBytes, granularity, device);
  } finally {
    vmm.release(handle); // the mapping keeps the memory alive
  }
  return {
    address,
    close() {
      vmm.unmap(address, exported.paddedBytes);
      vmm.addressFree(address, exported.paddedBytes);
    },
  };
}
