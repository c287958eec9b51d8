// The copy kernel's machine code for one GPU architecture: compiled by NVRTC the first time, then
// kept in memory and in a cache folder shared by the ranks (every rank of a node would otherwise
// compile the same source), keyed by a hash of the source and the compiler options.
//   XFER_KERNEL_CACHE=<dir> (default $XDG_CACHE_HOME or ~/.cache, then disagg-bench/kernels);
//   XFER_KERNEL_CACHE=off keeps compiled code in memory only.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nvrtc } from '../native/nvrtc.ts';

export interface KernelImage {
  /** CUBIN for `arch`. */
  image: Buffer;
  arch: string;
  /** Where it came from this time. */
  origin: 'memory' | 'cache folder' | 'nvrtc';
  /** The cache file, when the cache folder is on. */
  file?: string;
}

const inMemory = new Map<string, Buffer>();

/** `sm_90` for compute capability [9, 0]. */
export const archName = ([major, minor]: readonly [number, number]): string => `sm_${major}${minor}`;

/** The NVRTC options for an architecture: CUBIN, so the driver need not JIT anything. */
export const compileOptions = (arch: string): string[] => [`--gpu-architecture=${arch}`, '--std=c++17'];

/** The cache folder, or undefined when XFER_KERNEL_CACHE=off. */
export function kernelCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const set = env.XFER_KERNEL_CACHE?.trim();
  if (set === 'off') return undefined;
  if (set) return set;
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'disagg-bench', 'kernels');
}

/** The cache key of a source for an architecture (also the cache file's name). */
export function kernelKey(name: string, source: string, arch: string): string {
  const hash = createHash('sha256').update(source).update('\0').update(compileOptions(arch).join(' ')).digest('hex').slice(0, 20);
  return `${name}-${hash}-${arch}.cubin`;
}

/** The CUBIN of `source` for `arch`: from memory, the cache folder, or compiled now. */
export function kernelImage(name: string, source: string, arch: string, dir = kernelCacheDir()): KernelImage {
  const key = kernelKey(name, source, arch);
  const file = dir === undefined ? undefined : path.join(dir, key);
  const cached = inMemory.get(key);
  if (cached) return { image: cached, arch, origin: 'memory', file };
  if (file) {
    const image = readIfPresent(file);
    if (image) {
      inMemory.set(key, image);
      return { image, arch, origin: 'cache folder', file };
    }
  }
  const { image } = nvrtc().compile(source, `${name}.cu`, compileOptions(arch));
  inMemory.set(key, image);
  if (file) writeAtomically(file, image);
  return { image, arch, origin: 'nvrtc', file };
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    const image = fs.readFileSync(file);
    return image.length > 0 ? image : undefined;
  } catch {
    return undefined;
  }
}

/** Written under a temporary name, then renamed: a rank never reads half a file another is writing. */
function writeAtomically(file: string, image: Buffer): void {
  const tmp = `${file}.${process.pid}.${randomBytes(3).toString('hex')}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, image);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    // The cache only saves time: the compiled code is in memory. Say once why the folder was not used.
    if (!warned) console.warn(`xfer: kernel cache folder not used (${(err as Error).message}); set XFER_KERNEL_CACHE to a writable folder or 'off'`);
    warned = true;
  }
}

let warned = false;
