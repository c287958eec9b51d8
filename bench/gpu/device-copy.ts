// The copy kernel (runners/xfer/device-copy/) against cudaMemcpyAsync, same bytes, same run: rank 0
// copies its buffer into rank 1's through the pointer CUDA IPC gives it (the cuda backend's path),
// timed on the GPU with events, alternating kernel and memcpy, median of --iters. Each size's
// copy is verified byte for byte at rank 1. Rows for many small blocks too (one kernel launch
// against one cudaMemcpyAsync per block). Goal: kernel >= 0.9x memcpy from 16 MiB up.
// Command line: USAGE below (--help prints it).
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appendJsonLine, runAsLocalRanks } from '../lib/local-ranks.ts';
import { maxOf } from '../lib/stats.ts';
import { allocateGpu, checkPattern, cudart, fillPattern, nvmlDeviceNames, openStore, rankFromEnv } from '../../runners/xfer/index.ts';
import { cudaMemcpyDefault } from '../../runners/xfer/native/cudart.ts';
import { DeviceCopier, type DevicePhase } from '../../runners/xfer/device-copy/device-copier.ts';
import { defaultKernelShape, parseKernelShape } from '../../runners/xfer/device-copy/kernel-source.ts';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: node --import tsx bench/gpu/device-copy.ts --ranks-share-gpu [--sizes 16M,64M,256M,1G] [--iters 20]
    [--kernel THREADS/UNROLL/streaming|cached] [--shapes SHAPE,...] [--out FILE]
  --ranks-share-gpu puts both ranks on GPU 0 (two processes can open each other's IPC handles on
  one device): allowed for this benchmark only, which says so in its output. Without it, rank r
  uses GPU r (2 GPUs needed): the kernel then writes over NVLink/PCIe against cudaMemcpyAsync peer.
  --kernel: the kernel's shape for every row (default: the backend's); --shapes: extra kernel shapes
  timed at the largest size, e.g. 256/8/streaming,512/4/cached; --out: the JSON lines file (default
  bench/results/gpu/device-copy.jsonl).`;

const here = fileURLToPath(import.meta.url);
const cli = benchOptions({
  options: {
    sizes: { type: 'string', default: '16M,64M,256M,1G' },
    iters: { type: 'string', default: '20' },
    'ranks-share-gpu': { type: 'boolean', default: false },
    /** The kernel's shape for every row, threads/unroll/streaming|cached (default: the backend's). */
    kernel: { type: 'string' },
    /** Extra kernel shapes to time at the largest size, e.g. 256/8/streaming,512/4/cached. */
    shapes: { type: 'string', default: '' },
    out: { type: 'string' },
  },
}, USAGE);
const { values } = cli;
const sizes = cli.sizes('sizes', { min: 1 });
const iterations = cli.wholeNumber('iters');
const share = values['ranks-share-gpu'];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const GOAL = 0.9;
const GOAL_FROM = 16 << 20;
const kernelShape = values.kernel === undefined ? defaultKernelShape : cli.parsed('kernel', (raw) => parseKernelShape(raw, '--kernel'));
const extraShapes = values.shapes === '' ? [] : cli.parsedList('shapes', (raw) => ({ raw, shape: parseKernelShape(raw, '--shapes') }));

interface Row {
  name: string;
  bytes: number;
  kernelGBps: number;
  memcpyGBps: number;
  verified?: boolean;
}

/** Median GPU time (ms) of `kernel` and of `memcpy`, alternating, after two warm-ups of each. */
function timeBoth(stream: bigint, kernel: () => void, memcpy: () => void): [number, number] {
  const cuda = cudart();
  const [e0, e1] = [cuda.eventCreate(true), cuda.eventCreate(true)];
  const samples: [number[], number[]] = [[], []];
  for (let i = -2; i < iterations; i++) {
    [kernel, memcpy].forEach((op, k) => {
      cuda.eventRecord(e0, stream);
      op();
      cuda.eventRecord(e1, stream);
      cuda.streamSynchronize(stream);
      if (i >= 0) samples[k].push(cuda.eventElapsedMs(e0, e1));
    });
  }
  cuda.eventDestroy(e0);
  cuda.eventDestroy(e1);
  return [median(samples[0]), median(samples[1])];
}

async function rankMain(): Promise<void> {
  const info = rankFromEnv();
  const store = await openStore(info);
  const cuda = cudart();
  if (!share && cuda.deviceCount() < 2) throw new Error('1 GPU: both ranks would share GPU 0; pass --ranks-share-gpu (allowed for this benchmark only)');
  const device = share ? 0 : info.localRank;
  const largest = maxOf(sizes);
  // Allocated and exported as the engine does (memory.ts); rank 0 opens rank 1's handle below.
  const buffer = allocateGpu(info.rank === 0 ? 'src' : 'dst', largest, device, { rank: info.rank, node: info.node });
  const descriptor = buffer.descriptor();
  if (descriptor.kind !== 'gpu') throw new Error('a GPU region has a GPU descriptor');
  const handles = await store.allGather('device-copy-ipc', descriptor.ipc.toString('base64'));
  const rows: Row[] = [];
  if (info.rank === 0) {
    const dst = cuda.ipcOpenMemHandle(Buffer.from(handles[1], 'base64')); // as the cuda backend opens peers' regions
    const stream = cuda.streamCreate();
    const copier = new DeviceCopier(device, kernelShape);
    const measure = (name: string, spans: { offset: number; bytes: number }[], c = copier): Row => {
      const phase: DevicePhase = c.prepare({ copies: spans.map((s) => ({ src: buffer.address + BigInt(s.offset), dst: dst + BigInt(s.offset), bytes: s.bytes })), signals: [], timeoutNs: 0 });
      const [k, m] = timeBoth(
        stream,
        () => c.launch(phase, 0, stream),
        () => spans.forEach((s) => cuda.memcpyAsync(dst + BigInt(s.offset), buffer.address + BigInt(s.offset), s.bytes, cudaMemcpyDefault, stream)),
      );
      c.release(phase);
      const bytes = spans.reduce((a, s) => a + s.bytes, 0);
      return { name, bytes, kernelGBps: bytes / k / 1e6, memcpyGBps: bytes / m / 1e6 };
    };
    for (const size of sizes) {
      fillPattern(buffer, 0, size, { sender: 0, receiver: 1, iteration: size });
      await store.barrier('device-copy-poisoned'); // rank 1 poisoned its buffer
      const row = measure(`one block of ${size >> 20} MiB`, [{ offset: 0, bytes: size }]);
      await store.barrier('device-copy-done');
      row.verified = await store.wait<boolean>(`device-copy-verified-${size}`, { from: 1 });
      rows.push(row);
    }
    for (const [count, bytes] of [[1024, 7408], [1024, 16384], [256, 1 << 20]]) {
      if (count * bytes * 2 > largest) continue;
      rows.push(measure(`${count} blocks of ${bytes} B`, Array.from({ length: count }, (_, i) => ({ offset: i * bytes * 2, bytes }))));
    }
    for (const { raw, shape } of extraShapes) {
      const c = new DeviceCopier(device, shape);
      rows.push(measure(`one block of ${largest >> 20} MiB, kernel ${raw}`, [{ offset: 0, bytes: largest }], c));
      c.destroy();
    }
    copier.destroy();
    cuda.streamDestroy(stream);
    cuda.ipcCloseMemHandle(dst);
    report(rows, device, copier.image.origin);
  } else {
    for (const size of sizes) {
      buffer.fill(0x5a, 0, size);
      await store.barrier('device-copy-poisoned');
      await store.barrier('device-copy-done');
      await store.set(`device-copy-verified-${size}`, checkPattern(buffer, 0, size, { sender: 0, receiver: 1, iteration: size }) === undefined);
    }
  }
  await store.barrier('device-copy-end');
  buffer.close();
  await store.close();
}

function report(rows: Row[], device: number, origin: string): void {
  const gpu = nvmlDeviceNames()[device];
  const where = share ? `2 ranks sharing GPU 0 (${gpu}; allowed for this benchmark only)` : `rank 0 on GPU 0 -> rank 1 on GPU 1 (${gpu})`;
  console.log(`\ncopy kernel vs cudaMemcpyAsync, ${where}; kernel ${JSON.stringify(kernelShape)}${kernelShape === defaultKernelShape ? ' (the default)' : ''} from ${origin}; median of ${iterations}`);
  console.log(`${'copy'.padEnd(44)} ${'kernel GB/s'.padStart(12)} ${'memcpy GB/s'.padStart(12)} ${'ratio'.padStart(7)} verified`);
  for (const r of rows) {
    const v = r.verified === undefined ? '' : r.verified ? 'yes' : 'NO';
    console.log(`${r.name.padEnd(44)} ${r.kernelGBps.toFixed(1).padStart(12)} ${r.memcpyGBps.toFixed(1).padStart(12)} ${(r.kernelGBps / r.memcpyGBps).toFixed(3).padStart(7)} ${v}`);
  }
  const goalRows = rows.filter((r) => r.verified !== undefined && r.bytes >= GOAL_FROM);
  const verdict = goalRows.every((r) => r.verified && r.kernelGBps / r.memcpyGBps >= GOAL) ? 'PASS' : 'FAIL';
  console.log(`goal: kernel >= ${GOAL}x cudaMemcpyAsync for one block >= 16 MiB, every byte verified: ${verdict}`);
  const line = { date: new Date().toISOString(), host: os.hostname(), gpu, sharedGpu: share, node: process.version, cudaRuntime: cudart().runtimeVersion(), kernel: kernelShape, defaultKernel: kernelShape === defaultKernelShape, iterations, rows, goal: GOAL, verdict };
  const out = values.out ?? path.join(path.dirname(here), '..', 'results', 'gpu', 'device-copy.jsonl');
  appendJsonLine(out, line);
}

await runAsLocalRanks(here, 2, rankMain);
