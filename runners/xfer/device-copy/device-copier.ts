// Runs the copy kernel on one GPU: compiles or finds its CUBIN (kernel-cache.ts), loads it into
// the runtime's primary context, keeps each prepared phase in one device allocation
// (copy-table.ts), launches a phase with cuLaunchKernel on a runtime stream, and reads back the
// state the kernel keeps (status, global-timer stamps of the last launch, sums over all).
import koffi from 'koffi';
import { XferError } from '../errors.ts';
import { cudaDriver, type CudaDriver } from '../native/cuda-driver.ts';
import { cudart, cudaMemcpyDeviceToHost, cudaMemcpyHostToDevice, type Cudart } from '../native/cudart.ts';
import { decodeState, gridBlocks, phaseTable, STATE_BYTES, type PhaseSpec, type PhaseState } from './copy-table.ts';
import { archName, kernelImage, type KernelImage } from './kernel-cache.ts';
import { backendKernelShape, backendKernelSync, KERNEL_NAME, kernelSource, STATUS_OK, STATUS_WAIT_TIMEOUT, type KernelShape, type KernelSync } from './kernel-source.ts';

/** A phase ready to launch, as many times as wanted (one launch at a time). */
export interface DevicePhase {
  readonly blocks: number;
  readonly totalChunks: number;
  readonly bytes: number;
  readonly unalignedBytes: number;
  /** The phase descriptor's device address (the kernel's first argument). */
  readonly address: bigint;
  /** The kernel's state words (kernel-source.ts STATE_FIELDS). */
  readonly stateAddress: bigint;
}

export class DeviceCopier {
  readonly image: KernelImage;
  private readonly cuda: Cudart;
  private readonly driver: CudaDriver;
  private readonly module: bigint;
  private readonly kernel: bigint;
  private readonly blocksPerMultiprocessor: number;
  private readonly multiprocessors: number;
  /** cuLaunchKernel's argument table: [&phase, &seq, phase, seq] (stable native memory). */
  private readonly params: bigint;
  private readonly paramView: DataView;
  private readonly allocations = new Set<bigint>();

  constructor(
    readonly device: number,
    readonly shape: KernelShape = backendKernelShape(),
    readonly sync: KernelSync = backendKernelSync(),
  ) {
    this.cuda = cudart();
    this.driver = cudaDriver();
    this.cuda.setDevice(device);
    this.driver.usePrimaryContext(device);
    this.image = kernelImage(KERNEL_NAME, kernelSource(shape, sync), archName(this.driver.computeCapability(device)));
    this.module = this.driver.moduleLoad(this.image.image);
    this.kernel = this.driver.kernel(this.module, KERNEL_NAME);
    this.multiprocessors = this.driver.multiprocessors(device);
    this.blocksPerMultiprocessor = this.driver.maxBlocksPerMultiprocessor(this.kernel, shape.threads);
    if (this.blocksPerMultiprocessor < 1) throw new XferError(`${KERNEL_NAME}: ${shape.threads} threads per block do not fit on device ${device}`);
    this.params = koffi.alloc('uint8_t', 32) as bigint;
    this.paramView = new DataView(koffi.view(this.params, 32));
    this.paramView.setBigUint64(0, this.params + 16n, true);
    this.paramView.setBigUint64(8, this.params + 24n, true);
  }

  /** Blocks of a launch that fill the GPU once. */
  get maxBlocks(): number {
    return this.multiprocessors * this.blocksPerMultiprocessor;
  }

  /** Uploads a phase into a fresh device allocation (freed by release() or destroy()). */
  prepare(spec: PhaseSpec, maxBlocks = this.maxBlocks): DevicePhase {
    this.cuda.setDevice(this.device);
    const size = phaseTable(spec, this.shape, 0n).bytes.length;
    const base = this.cuda.malloc(size);
    this.allocations.add(base);
    const table = phaseTable(spec, this.shape, base);
    this.cuda.memcpy(base, table.bytes, table.bytes.length, cudaMemcpyHostToDevice);
    return {
      blocks: gridBlocks(table.totalChunks, maxBlocks),
      totalChunks: table.totalChunks,
      bytes: table.copies.reduce((a, c) => a + c.bytes, 0),
      unalignedBytes: table.unalignedBytes,
      address: base + BigInt(table.offsets.phase),
      stateAddress: base + BigInt(table.offsets.state),
    };
  }

  /** Queues one run of the phase on `stream`; `seq` is what its signals will carry. */
  launch(phase: DevicePhase, seq: number, stream: bigint): void {
    this.paramView.setBigUint64(16, phase.address, true);
    this.paramView.setBigUint64(24, BigInt(seq), true);
    this.driver.launch(this.kernel, { blocks: phase.blocks, threads: this.shape.threads, stream, params: this.params });
  }

  /** The phase's state as its last launch left it (read once the stream has synchronised). */
  state(phase: DevicePhase): PhaseState {
    const words = Buffer.alloc(STATE_BYTES);
    this.cuda.memcpy(words, phase.stateAddress, STATE_BYTES, cudaMemcpyDeviceToHost);
    return decodeState(words);
  }

  /** 'ok', or 'timeout' when a run of the phase gave up waiting for its signals (after the stream synchronised). */
  status(phase: DevicePhase): 'ok' | 'timeout' {
    const value = this.state(phase).status;
    if (value === STATUS_OK) return 'ok';
    if (value === STATUS_WAIT_TIMEOUT) return 'timeout';
    throw new XferError(`${KERNEL_NAME}: unknown status ${value}`);
  }

  release(phase: DevicePhase): void {
    // The phase descriptor is at the start of its allocation.
    if (this.allocations.delete(phase.address)) this.cuda.free(phase.address);
  }

  destroy(): void {
    this.cuda.setDevice(this.device);
    for (const a of this.allocations) this.cuda.free(a);
    this.allocations.clear();
    this.driver.moduleUnload(this.module);
    koffi.free(this.params);
  }
}
