// Registered buffers: host memory in POSIX shared memory (same-node peers map it by name) or GPU
// memory from cudaMalloc (same-node peers open it through its CUDA IPC handle).
import koffi from 'koffi';
import { randomBytes } from 'node:crypto';
import { XferError } from './errors.ts';
import { removeSegments, segmentPrefix, SHM_DIR } from './shm-segments.ts';
import { cudart, cudaMemcpyDeviceToHost, cudaMemcpyHostToDevice } from './native/cudart.ts';
import { libc, MAP_POPULATE, MAP_SHARED, O_CREAT, O_EXCL, O_RDWR, PROT_READ, PROT_WRITE } from './native/libc.ts';

export type MemoryKind = 'host' | 'gpu';

/** What a peer needs to reach a region: sent through the store. */
export type RegionDescriptor =
  | { kind: 'host'; name: string; rank: number; node: string; size: number; address: string; shm: string; file?: HostFile }
  | { kind: 'gpu'; name: string; rank: number; node: string; size: number; address: string; device: number; ipc: Buffer; vmm?: VmmExport };

/** A host region that is not a POSIX shm segment (huge pages): the file peers open and its mapped length. */
export interface HostFile {
  path: string;
  mappedBytes: number;
}

/** A CUDA VMM allocation exported to same-node peers (memory-vmm.ts). */
export interface VmmExport {
  /** The owner's process and its POSIX file descriptor of the allocation's shareable handle. */
  pid: number;
  fd: number;
  /** The mapped (granularity-padded) size. */
  paddedBytes: number;
}

/** How a region's memory is allocated: host on huge pages, GPU through CUDA VMM (nixlbench's --use_hugepages, --enable_vmm). */
export interface AllocationStyle {
  hugepages?: boolean;
  vmm?: boolean;
}

export interface Region {
  readonly name: string;
  readonly kind: MemoryKind;
  /** Usable bytes. */
  readonly size: number;
  /** Local address (host virtual address or device pointer). */
  readonly address: bigint;
  /** CUDA device of a GPU region. */
  readonly device?: number;
  descriptor(): RegionDescriptor;
  /** Copies `data` into the region at `offset`. */
  write(offset: number, data: Uint8Array): void;
  /** The bytes at [offset, offset + length): a view for host memory, a copy for GPU memory. */
  read(offset: number, length: number): Uint8Array;
  /** Sets [offset, offset + length) (default: all) to `byte` (memset / cudaMemset). */
  fill(byte: number, offset?: number, length?: number): void;
  close(): void;
}

/** A peer's host region mapped into this process. */
export interface MappedRegion {
  readonly address: bigint;
  readonly size: number;
  close(): void;
}

const PAGE = 4096;
const liveShmNames = new Set<string>();

/**
 * Host memory in a POSIX shared-memory segment named after this process, the job and the rank
 * (/xfer-<pid>.<pid namespace>-<job>-r<rank>-<name>-<random>), unlinked on close and at exit.
 */
export function allocateHost(name: string, size: number, owner: { job: string; rank: number; node: string }): Region {
  const c = libc();
  if (!staleSwept) removeStaleSegments();
  const shm = `/${segmentPrefix()}${sanitize(owner.job)}-r${owner.rank}-${sanitize(name)}-${randomBytes(3).toString('hex')}`;
  const mapped = Math.max(PAGE, roundUp(size, PAGE));
  const fd = c.shmOpen(shm, O_CREAT | O_EXCL | O_RDWR, 0o600);
  let address = 0n;
  try {
    c.ftruncate(fd, mapped);
    address = c.mmap(mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd);
  } catch (err) {
    c.shmUnlinkIfExists(shm);
    throw err;
  } finally {
    c.close(fd);
  }
  trackShm(shm);
  return hostRegion(name, address, size, { shm, owner }, () => {
    c.munmap(address, mapped);
    c.shmUnlinkIfExists(shm);
    liveShmNames.delete(shm);
  });
}

/**
 * A Region over host memory at `address` that someone else allocated (allocateHost, huge pages, or
 * a backend that allocates its own registered memory): byte access through a view, `release` once
 * on close. Same-node peers map `shm` ('' when there is none) or, when given, `file`.
 */
export function hostRegion(
  name: string,
  address: bigint,
  size: number,
  where: { shm: string; owner: { rank: number; node: string }; file?: HostFile },
  release: () => void,
): Region {
  const bytes = new Uint8Array(koffi.view(address, Math.max(size, 1)), 0, size);
  const { shm, owner, file } = where;
  let open = true;
  return {
    name,
    kind: 'host',
    size,
    address,
    descriptor: () => ({ kind: 'host', name, rank: owner.rank, node: owner.node, size, address: address.toString(), shm, ...(file ? { file } : {}) }),
    write(offset, data) {
      checkRange(name, size, offset, data.length);
      bytes.set(data, offset);
    },
    read(offset, length) {
      checkRange(name, size, offset, length);
      return bytes.subarray(offset, offset + length);
    },
    fill(byte, offset = 0, length = size - offset) {
      checkRange(name, size, offset, length);
      bytes.fill(byte, offset, offset + length);
    },
    close() {
      if (!open) return;
      open = false;
      release();
    },
  };
}

/** Maps a same-node peer's host region (by its shm name, or the file of a huge-page region) into this process. */
export function mapPeerHost(descriptor: Extract<RegionDescriptor, { kind: 'host' }>): MappedRegion {
  const c = libc();
  const mapped = descriptor.file?.mappedBytes ?? Math.max(PAGE, roundUp(descriptor.size, PAGE));
  const fd = descriptor.file ? c.open(descriptor.file.path, O_RDWR) : c.shmOpen(descriptor.shm, O_RDWR, 0);
  let address: bigint;
  try {
    address = c.mmap(mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd);
  } finally {
    c.close(fd);
  }
  let open = true;
  return {
    address,
    size: descriptor.size,
    close() {
      if (open) c.munmap(address, mapped);
      open = false;
    },
  };
}

/** GPU memory on `device` (cudaMalloc), exportable to same-node peers through CUDA IPC. */
export function allocateGpu(name: string, size: number, device: number, owner: { rank: number; node: string }): Region {
  const cuda = cudart();
  cuda.setDevice(device);
  const address = cuda.malloc(Math.max(size, 1));
  let ipc: Buffer | undefined;
  return gpuRegion(name, size, address, device, owner, () => ({ ipc: (ipc ??= cuda.ipcGetMemHandle(address)) }), () => cuda.free(address));
}

/** A Region over `size` bytes of device memory at `address`; `exported` says how peers reach it, `release` frees it (once). */
export function gpuRegion(
  name: string,
  size: number,
  address: bigint,
  device: number,
  owner: { rank: number; node: string },
  exported: () => { ipc: Buffer; vmm?: VmmExport },
  release: () => void,
): Region {
  const cuda = cudart();
  let open = true;
  return {
    name,
    kind: 'gpu',
    size,
    address,
    device,
    descriptor: () => ({ kind: 'gpu', name, rank: owner.rank, node: owner.node, size, address: address.toString(), device, ...exported() }),
    write(offset, data) {
      checkRange(name, size, offset, data.length);
      if (data.length > 0) cuda.memcpy(address + BigInt(offset), asBuffer(data), data.length, cudaMemcpyHostToDevice);
    },
    read(offset, length) {
      checkRange(name, size, offset, length);
      const out = Buffer.alloc(length);
      if (length > 0) cuda.memcpy(out, address + BigInt(offset), length, cudaMemcpyDeviceToHost);
      return out;
    },
    fill(byte, offset = 0, length = size - offset) {
      checkRange(name, size, offset, length);
      if (length > 0) cuda.memset(address + BigInt(offset), byte, length);
    },
    close() {
      if (open) release();
      open = false;
    },
  };
}

/**
 * [offset, offset + length) of `region` as a region of its own, for registering part of a buffer
 * (nixlbench's --reregister_mem registers each iteration's blocks). Closing it frees nothing.
 */
export function regionView(region: Region, offset: number, length: number): Region {
  checkRange(region.name, region.size, offset, length);
  const name = `${region.name}[${offset},+${length}]`;
  return {
    name,
    kind: region.kind,
    size: length,
    address: region.address + BigInt(offset),
    device: region.device,
    descriptor: () => ({ ...region.descriptor(), name, size: length, address: (region.address + BigInt(offset)).toString() }),
    write: (at, data) => region.write(offset + at, data),
    read: (at, n) => region.read(offset + at, n),
    fill: (byte, at = 0, n = length - at) => region.fill(byte, offset + at, n),
    close() {},
  };
}

/** Whether [offset, offset + length) lies inside `size` bytes (integers, not negative). */
export function fitsIn(size: number, offset: number, length: number): boolean {
  return Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0 && offset + length <= size;
}

function checkRange(region: string, size: number, offset: number, length: number): void {
  if (!fitsIn(size, offset, length)) throw new XferError(`region '${region}': [${offset}, ${offset + length}) is outside its ${size} bytes`);
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

function roundUp(n: number, unit: number): number {
  return Math.ceil(n / unit) * unit;
}

function sanitize(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 60);
}

let staleSwept = false;

/**
 * Unlinks segments left by processes of this machine and PID namespace that no longer exist
 * (killed by SIGKILL or aborted: no exit hook ran). Returns their names. Runs once per process before the first allocation.
 */
export function removeStaleSegments(dir = SHM_DIR): string[] {
  staleSwept = true;
  return removeSegments((pid) => !processExists(pid), dir);
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Segments are unlinked on close; these hooks unlink them too when the process exits first. */
function trackShm(name: string): void {
  if (liveShmNames.size === 0 && !hooksInstalled) installExitHooks();
  liveShmNames.add(name);
}

let hooksInstalled = false;
function installExitHooks(): void {
  hooksInstalled = true;
  const unlinkAll = () => {
    for (const name of liveShmNames) libc().shmUnlinkIfExists(name);
    liveShmNames.clear();
  };
  process.on('exit', unlinkAll);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = () => {
      unlinkAll();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal); // then die of the signal as if nobody had listened
    };
    process.on(signal, onSignal);
  }
}
