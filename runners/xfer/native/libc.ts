// libc through koffi: POSIX shared memory, memfds (huge pages), mappings, descriptors of other
// processes (pidfd), memory copies (also into another process: CMA) and poll(2).
import koffi from 'koffi';
import { namedStruct } from './named-type.ts';
import { NativeCallError } from '../errors.ts';
import { addressOf, lazyBinding, openLibrary } from './load.ts';

// Linux x86-64/aarch64 values.
export const O_RDWR = 0o2;
export const O_CREAT = 0o100;
export const O_EXCL = 0o200;
export const PROT_READ = 0x1;
export const PROT_WRITE = 0x2;
export const MAP_SHARED = 0x01;
export const MAP_PRIVATE = 0x02;
export const MAP_ANONYMOUS = 0x20;
/** Pre-faults the pages so the first transfer does not pay for page faults. */
export const MAP_POPULATE = 0x8000;
export const POLLIN = 0x1;
export const MFD_CLOEXEC = 0x1;
/** memfd_create: back the file with huge pages of the size given by MFD_HUGE_2MB. */
export const MFD_HUGETLB = 0x4;
export const MFD_HUGE_2MB = 21 << 26;
// Syscall numbers of the generic table (the same on x86-64 and aarch64).
const SYS_PIDFD_OPEN = 434;
const SYS_PIDFD_GETFD = 438;
const MAP_FAILED = (1n << 64n) - 1n;

export interface Libc {
  shmOpen(name: string, flags: number, mode: number): number;
  open(path: string, flags: number, mode?: number): number;
  /** An anonymous file (huge pages with MFD_HUGETLB | MFD_HUGE_2MB); peers open it as /proc/<pid>/fd/<fd>. */
  memfdCreate(name: string, flags: number): number;
  /** A duplicate of process `pid`'s descriptor `fd` in this process (pidfd_open + pidfd_getfd, Linux 5.6). */
  pidfdGetFd(pid: number, fd: number): number;
  shmUnlink(name: string): void;
  /** shm_unlink that reports whether the name existed (ENOENT is not an error here). */
  shmUnlinkIfExists(name: string): boolean;
  ftruncate(fd: number, length: number): void;
  close(fd: number): void;
  mmap(length: number, prot: number, flags: number, fd: number): bigint;
  munmap(addr: bigint, length: number): void;
  memcpy(dst: bigint, src: bigint, n: number): void;
  /** memcpy on one of koffi's worker threads; copies run in parallel and the event loop stays free. */
  memcpyAsync(dst: bigint, src: bigint, n: number): Promise<void>;
  memset(dst: bigint, byte: number, n: number): void;
  /** process_vm_writev of one contiguous range into process `pid` (CMA, as libfabric's shm provider copies): bytes written. */
  processVmWritev(pid: number, local: bigint, remote: bigint, n: number): number;
  memcmp(a: bigint, b: bigint, n: number): number;
  /** poll(2) on one fd, on a worker thread: resolves true when readable, false on timeout. */
  pollReadable(fd: number, timeoutMs: number): Promise<boolean>;
  strerror(errnum: number): string;
}

export const libc = lazyBinding((): Libc => {
  const lib = openLibrary('libc', ['libc.so.6']);
  const pollfd = namedStruct('xfer_pollfd', { fd: 'int', events: 'short', revents: 'short' });
  const iovec = namedStruct('xfer_iovec', { base: 'uint64_t', len: 'size_t' });
  const f = {
    shm_open: lib.func('int shm_open(const char *name, int oflag, uint32_t mode)'),
    shm_unlink: lib.func('int shm_unlink(const char *name)'),
    open: lib.func('int open(const char *path, int flags, uint32_t mode)'),
    memfd_create: lib.func('int memfd_create(const char *name, unsigned int flags)'),
    syscall: lib.func('long syscall(long number, ...)'),
    ftruncate: lib.func('int ftruncate(int fd, int64_t length)'),
    close: lib.func('int close(int fd)'),
    mmap: lib.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)'),
    munmap: lib.func('int munmap(void *addr, size_t length)'),
    memcpy: lib.func('void *memcpy(void *dst, const void *src, size_t n)'),
    memset: lib.func('void *memset(void *dst, int c, size_t n)'),
    memcmp: lib.func('int memcmp(const void *a, const void *b, size_t n)'),
    process_vm_writev: lib.func('process_vm_writev', 'long', ['int', koffi.pointer(iovec), 'unsigned long', koffi.pointer(iovec), 'unsigned long', 'unsigned long']),
    poll: lib.func('poll', 'int', [koffi.inout(koffi.pointer(pollfd)), 'uint64_t', 'int']),
    strerror: lib.func('const char *strerror(int errnum)'),
  };
  const fail = (call: string): never => {
    const errno = koffi.errno();
    throw new NativeCallError('libc', call, errno, f.strerror(errno) as string);
  };
  const check = (rc: number, call: string): number => (rc < 0 ? fail(call) : rc);
  const ENOENT = koffi.os.errno.ENOENT;

  return {
    shmOpen: (name, flags, mode) => check(f.shm_open(name, flags, mode), `shm_open("${name}")`),
    open: (path, flags, mode = 0) => check(f.open(path, flags, mode), `open("${path}")`),
    memfdCreate: (name, flags) => check(f.memfd_create(name, flags), `memfd_create("${name}")`),
    pidfdGetFd(pid, fd) {
      const pidfd = check(Number(f.syscall(SYS_PIDFD_OPEN, 'int', pid, 'unsigned int', 0)), `pidfd_open(${pid})`);
      try {
        return check(Number(f.syscall(SYS_PIDFD_GETFD, 'int', pidfd, 'int', fd, 'unsigned int', 0)), `pidfd_getfd(pid ${pid}, fd ${fd})`);
      } finally {
        f.close(pidfd);
      }
    },
    shmUnlink: (name) => void check(f.shm_unlink(name), `shm_unlink("${name}")`),
    shmUnlinkIfExists(name) {
      if (f.shm_unlink(name) === 0) return true;
      if (koffi.errno() === ENOENT) return false;
      return fail(`shm_unlink("${name}")`);
    },
    ftruncate: (fd, length) => void check(f.ftruncate(fd, length), `ftruncate(fd ${fd}, ${length})`),
    close: (fd) => void check(f.close(fd), `close(${fd})`),
    mmap(length, prot, flags, fd) {
      const p = addressOf(f.mmap(null, length, prot, flags, fd, 0));
      if (p === MAP_FAILED || p === 0n) fail(`mmap(${length} bytes, fd ${fd})`);
      return p;
    },
    munmap: (addr, length) => void check(f.munmap(addr, length), `munmap(0x${addr.toString(16)}, ${length})`),
    memcpy: (dst, src, n) => void f.memcpy(dst, src, n),
    memcpyAsync: (dst, src, n) =>
      new Promise<void>((resolve, reject) => {
        f.memcpy.async(dst, src, n, (err: unknown) => (err ? reject(err) : resolve()));
      }),
    memset: (dst, byte, n) => void f.memset(dst, byte, n),
    processVmWritev(pid, local, remote, n) {
      return check(Number(f.process_vm_writev(pid, { base: local, len: n }, 1, { base: remote, len: n }, 1, 0)), `process_vm_writev(pid ${pid}, ${n} bytes)`);
    },
    memcmp: (a, b, n) => f.memcmp(a, b, n),
    pollReadable: (fd, timeoutMs) =>
      new Promise<boolean>((resolve, reject) => {
        const fds = { fd, events: POLLIN, revents: 0 };
        f.poll.async(fds, 1, timeoutMs, (err: unknown, rc: number) => {
          // rc < 0 (EINTR on the worker thread; errno is not visible here) counts as a wake-up:
          // the caller progresses and polls again, which is harmless.
          if (err) reject(err);
          else resolve(rc !== 0);
        });
      }),
    strerror: (errnum) => f.strerror(errnum) as string,
  };
});
