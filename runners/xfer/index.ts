// The transfer engine's public API. Depends on nothing in framework/ (runners/common is neutral).
export { rankFromEnv, type RankInfo, type Launcher } from './rank.ts';
export { expandHostlist } from '../common/hostlist.ts';
export {
  spawnLocalRanks,
  localRankEnv,
  localStoreJob,
  nodeEntryArgv,
  type LocalLaunchOptions,
  type LocalLaunchResult,
  type RankExit,
} from './local-launch.ts';
export { openStore, defaultTimeoutMs, StoreClient, StoreServer, type Store, type StoreOptions, type WaitOptions } from './store.ts';
export { monoNs, estimateOffset, sleep, yieldToEventLoop, type ClockOffset, type ClockSample } from './clock.ts';
export {
  allocateHost,
  allocateGpu,
  mapPeerHost,
  type MemoryKind,
  type Region,
  type RegionDescriptor,
  type MappedRegion,
} from './memory.ts';
export {
  fillPattern,
  poisonPattern,
  checkPattern,
  patternBytes,
  describeMismatch,
  type PatternStream,
  type PatternMismatch,
} from './pattern.ts';
export { XferEngine, type EngineOptions, type ControlPhase, type Plan } from './engine.ts';
export { availableBackends, backendAvailability, createBackend, type BackendAvailability, type BackendOptions } from './backends/registry.ts';
export {
  backendNames,
  type Backend,
  type BackendName,
  type XferOp,
  type XferRequest,
  type XferResult,
  type RequestTiming,
} from './backends/types.ts';
export type { ShmOptions } from './backends/shm.ts';
export type { UcxOptions } from './backends/ucx.ts';
export type { CudaOptions } from './backends/cuda.ts';
export type { LibfabricOptions } from './backends/libfabric.ts';
export {
  XferError,
  LibraryUnavailableError,
  NativeCallError,
  StoreTimeoutError,
  RankDeadError,
  TransferError,
  VerificationError,
  describeRanks,
} from './errors.ts';
export { libc } from './native/libc.ts';
export { ucp } from './native/ucp.ts';
export { libfabric } from './native/libfabric.ts';
export { cudart, type Cudart } from './native/cudart.ts';
export { cudaDriver } from './native/cuda-driver.ts';
export { nccl } from './native/nccl.ts';
export { nvml, nvmlDeviceNames } from './native/nvml.ts';
