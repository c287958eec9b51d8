// The run-time compiler and driver bindings, and the copy kernel on a real GPU. NVRTC needs no GPU:
// where libnvrtc is installed the kernel's source is compiled for real; elsewhere the binding's
// error must name the library. The GPU tests (2 and 4 ranks on the GPUs there are, sharing them
// through CUDA IPC: the kernel path of the cuda backend, CT all-to-all and GPU-initiated EP, all
// verified) run only where the cuda backend can; they are skipped here with the reason.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NativeCallError } from '../../runners/xfer/errors.ts';
import { probe } from '../../runners/xfer/native/load.ts';
import { nvrtc } from '../../runners/xfer/native/nvrtc.ts';
import { cudaDriver } from '../../runners/xfer/native/cuda-driver.ts';
import { backendAvailability } from '../../runners/xfer/backends/registry.ts';
import { kernelSource } from '../../runners/xfer/device-copy/kernel-source.ts';
import { compileOptions } from '../../runners/xfer/device-copy/kernel-cache.ts';
import { nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/local-launch.ts';

const compiler = probe(nvrtc);
const driver = probe(cudaDriver);
const cuda = backendAvailability('cuda');
const gpuSkip = cuda.available ? false : `no GPU here (${cuda.reason})`;

describe(`NVRTC ${compiler.available ? `${nvrtc().version().join('.')}` : `(absent: ${compiler.reason})`}`, () => {
  it.runIf(compiler.available)('compiles the copy kernel to a CUBIN (an ELF image) for sm_90', () => {
    const out = nvrtc().compile(kernelSource(), 'xfer_copy_phase.cu', compileOptions('sm_90'));
    expect(out.format).toBe('cubin');
    expect(out.image.subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  });

  it.runIf(compiler.available)('a compile error carries the compiler log', () => {
    const bad = () => nvrtc().compile('extern "C" __global__ void k() { undeclared(); }', 'bad.cu', compileOptions('sm_90'));
    expect(bad).toThrow(NativeCallError);
    expect(bad).toThrow(/nvrtc: nvrtcCompileProgram\(bad\.cu, --gpu-architecture=sm_90 --std=c\+\+17\) failed: NVRTC_ERROR_COMPILATION:\n.*undeclared/s);
  });

  it.runIf(!compiler.available)('absent: one error naming the library and the names tried', () => {
    expect(compiler.available ? '' : compiler.reason).toMatch(/^unavailable: nvrtc: cannot load any of libnvrtc\.so\.13: /);
  });
});

describe(`CUDA driver ${driver.available ? `${cudaDriver().driverVersion()}` : `(absent: ${driver.available ? '' : driver.reason})`}`, () => {
  it.runIf(driver.available && cuda.available)('reads the compute capability and multiprocessors of device 0', () => {
    const [major] = cudaDriver().computeCapability(0);
    expect(major).toBeGreaterThanOrEqual(7);
    expect(cudaDriver().multiprocessors(0)).toBeGreaterThan(0);
  });

  it.runIf(!driver.available)('absent or no device: one error naming the library or the failed call', () => {
    expect(driver.available ? '' : driver.reason).toMatch(/^(unavailable: cuda: cannot load any of libcuda\.so\.1: |cuda driver: cuInit failed: CUDA_ERROR_)/);
  });
});

describe.skipIf(gpuSkip)(`copy kernel on the GPU${gpuSkip ? ` (skipped: ${gpuSkip})` : ''}`, () => {
  const bin = fileURLToPath(new URL('../../bin/disagg-bench.js', import.meta.url));
  const selftest = fileURLToPath(new URL('../../runners/xfer/selftest.ts', import.meta.url));
  const run = async (ranks: number, argv: string[], timeoutS = 60) => {
    const lines: string[] = [];
    const r = await spawnLocalRanks(ranks, argv, { env: { XFER_TIMEOUT_S: String(timeoutS) }, onLine: (rank, _s, line) => lines.push(`[rank ${rank}] ${line}`) });
    return { ok: r.ok, output: lines.join('\n') };
  };

  it('moves a random matrix with the kernel, odd sizes and shards, READ and WRITE, verified', async () => {
    const r = await run(4, nodeEntryArgv(selftest, ['--backend', 'cuda', '--cuda-copy', 'kernel', '--shards', '3', '--max-bytes', '3000000']));
    expect(r.output).toMatch(/selftest ok: backend=cuda cuda-copy=kernel op=WRITE ranks=4 .* verified/);
    expect(r.output).toMatch(/selftest ok: backend=cuda cuda-copy=kernel op=READ ranks=4 .* verified/);
    expect(r.ok, r.output).toBe(true);
  });

  it('EP dispatch/combine GPU-initiated: every rank verifies both phases', async () => {
    const r = await run(2, [bin, 'ep', '--backend', 'cuda', '--initiated-by', 'gpu', '--tokens', '32', '--hidden', '1024', '--topk', '4', '--experts-per-rank', '4', '--mode', 'dispatch,combine,e2e', '--warmup', '1', '--iters', '3']);
    expect(r.output).toContain('Initiated by: gpu-initiated (one kernel launch per phase');
    for (const mode of ['dispatch', 'combine', 'e2e']) expect(r.output).toContain(`Data Plane (${mode}): 2/2 ranks passed`);
    expect(r.ok, r.output).toBe(true);
  });

  it('a rank that launches nothing: the waiting kernel gives up and the others name it', async () => {
    const r = await run(2, [bin, 'ep', '--backend', 'cuda', '--initiated-by', 'gpu', '--tokens', '16', '--hidden', '512', '--mode', 'dispatch', '--test-silent-rank', '1'], 4);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/rank 0: cuda: no flag 1 from rank\(s\) 1 within 4 s \(the kernel stopped waiting\)/);
  });
});
