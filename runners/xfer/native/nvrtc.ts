// libnvrtc (CUDA's run-time compiler) through koffi: CUDA C source in, CUBIN or PTX out, so the
// engine's kernels need no compiler at install time. Loaded lazily: importing this module on a
// machine without CUDA is fine. NVRTC needs no GPU: it compiles for the architecture it is given.
import { NativeCallError } from '../errors.ts';
import { lazyBinding, openLibrary } from './load.ts';
import { cudaLibraryCandidates } from './cuda-paths.ts';

const NVRTC_ERROR_COMPILATION = 6;

export interface CompiledProgram {
  /** CUBIN when compiled for a real architecture (sm_XX), else PTX (NUL-terminated text). */
  image: Buffer;
  format: 'cubin' | 'ptx';
  /** The compiler's log (warnings), empty when it said nothing. */
  log: string;
}

export interface Nvrtc {
  /** [major, minor] of the library. */
  version(): [number, number];
  /**
   * Compiles one translation unit. `options` as nvcc's device options (e.g. `--gpu-architecture=sm_90`);
   * with a real architecture the result is CUBIN, with a virtual one (compute_XX) PTX.
   * A compile error throws with the compiler's log in the message.
   */
  compile(source: string, name: string, options: readonly string[]): CompiledProgram;
}

export const nvrtc = lazyBinding((): Nvrtc => {
  const lib = openLibrary('nvrtc', cudaLibraryCandidates(['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so']));
  const f = {
    get_error_string: lib.func('const char *nvrtcGetErrorString(int result)'),
    version: lib.func('int nvrtcVersion(_Out_ int *major, _Out_ int *minor)'),
    create_program: lib.func(
      'int nvrtcCreateProgram(_Out_ void **prog, const char *src, const char *name, int numHeaders, const char **headers, const char **includeNames)',
    ),
    compile_program: lib.func('int nvrtcCompileProgram(void *prog, int numOptions, const char **options)'),
    get_program_log_size: lib.func('int nvrtcGetProgramLogSize(void *prog, _Out_ size_t *size)'),
    get_program_log: lib.func('int nvrtcGetProgramLog(void *prog, _Out_ uint8_t *log)'),
    get_cubin_size: lib.func('int nvrtcGetCUBINSize(void *prog, _Out_ size_t *size)'),
    get_cubin: lib.func('int nvrtcGetCUBIN(void *prog, _Out_ uint8_t *cubin)'),
    get_ptx_size: lib.func('int nvrtcGetPTXSize(void *prog, _Out_ size_t *size)'),
    get_ptx: lib.func('int nvrtcGetPTX(void *prog, _Out_ uint8_t *ptx)'),
    destroy_program: lib.func('int nvrtcDestroyProgram(_Inout_ void **prog)'),
  };
  const check = (rc: number, call: string, extra = ''): void => {
    if (rc !== 0) throw new NativeCallError('nvrtc', call, rc, `${f.get_error_string(rc) as string}${extra}`);
  };
  /** Reads a size-then-bytes result (log, CUBIN, PTX). */
  const fetch = (prog: bigint, sizeFn: (p: bigint, s: number[]) => number, dataFn: (p: bigint, b: Buffer) => number, what: string): Buffer => {
    const size = [0];
    check(sizeFn(prog, size), `nvrtcGet${what}Size`);
    const out = Buffer.alloc(size[0]);
    if (size[0] > 0) check(dataFn(prog, out), `nvrtcGet${what}`);
    return out;
  };
  const logOf = (prog: bigint): string => fetch(prog, f.get_program_log_size, f.get_program_log, 'ProgramLog').toString('utf8').replace(/\0+$/, '').trim();
  return {
    version() {
      const major = [0];
      const minor = [0];
      check(f.version(major, minor), 'nvrtcVersion');
      return [major[0], minor[0]];
    },
    compile(source, name, options) {
      const handle: [bigint | null] = [null];
      check(f.create_program(handle, source, name, 0, null, null), `nvrtcCreateProgram(${name})`);
      const prog = handle[0]!;
      try {
        const rc = f.compile_program(prog, options.length, [...options]) as number;
        const log = logOf(prog);
        if (rc === NVRTC_ERROR_COMPILATION) check(rc, `nvrtcCompileProgram(${name}, ${options.join(' ')})`, `:\n${log}`);
        check(rc, `nvrtcCompileProgram(${name}, ${options.join(' ')})`);
        const real = options.some((o) => /^(--gpu-architecture|-arch)=sm_/.test(o));
        const image = real ? fetch(prog, f.get_cubin_size, f.get_cubin, 'CUBIN') : fetch(prog, f.get_ptx_size, f.get_ptx, 'PTX');
        return { image, format: real ? 'cubin' : 'ptx', log };
      } finally {
        check(f.destroy_program([prog]), 'nvrtcDestroyProgram');
      }
    },
  };
});
