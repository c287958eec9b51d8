// nixlbench's flags beyond the sweep's shape (block sizes, iterations, scheme): how buffers are
// allocated (huge pages, CUDA VMM), how transfers and registrations are rebuilt per iteration,
// progress, devices per process (SG / MG), NICs, and how processes meet (ETCD / ASIO runtimes).
// Each is honoured as nixlbench means it (benchmark/nixlbench/src/utils/utils.cpp and
// worker/nixl/nixl_worker.cpp) or refused with one sentence saying why: none is dropped silently.
import type { OptionSpec } from '../../../common/args/read-args.ts';
import { UsageError, choiceOption } from '../common/options.ts';
import { gflagsInteger } from '../../../common/args/gflags.ts';

export const sweepModes = ['SG', 'MG'] as const;
export type SweepMode = (typeof sweepModes)[number];
export const runtimeTypes = ['ETCD', 'ASIO'] as const;

/** How processes started on their own find each other (nixlbench's runtimes). */
export interface SweepRuntime {
  type: (typeof runtimeTypes)[number];
  /** ETCD: ranks by order of arrival under /xferbench/<group>/ (the default group is 'default'). */
  etcdEndpoints?: string;
  benchmarkGroup: string;
  /** ASIO: two processes; the one that binds address:port is rank 0, the other connects. */
  asioAddress: string;
  asioPort: number;
  /** Whether any runtime flag was given (under srun/torchrun/mpirun they are refused). */
  given: string[];
}

export interface NixlbenchFlags {
  /** SG: one device per process; MG: one process drives num_initiator_dev (num_target_dev) devices. */
  mode: SweepMode;
  /** Rebuild the transfer (prepare) before every iteration, timed in Prep and in the loop. */
  recreateXfer: boolean;
  /** Register the iteration's local blocks before and deregister them after every iteration (implies recreateXfer). */
  reregisterMem: boolean;
  /** UCX: a dedicated thread progresses the worker (NIXL's progress thread). */
  progressThread: boolean;
  /** VRAM buffers from cuMemCreate/cuMemMap instead of cudaMalloc. */
  vmm: boolean;
  /** DRAM buffers on 2 MiB huge pages. */
  hugepages: boolean;
  runtime: SweepRuntime;
  /** --device_list: one NIC (UCX_NET_DEVICES) per initiator/target index; undefined = all. */
  deviceList?: string[];
  /** What rank 0 announces about these flags (nixlbench's own messages where it prints one). */
  notes: string[];
}

export const NIXLBENCH_BOOLEANS = ['enable_pt', 'recreate_xfer', 'reregister_mem', 'enable_vmm', 'use_hugepages'] as const;

/** parseArgs options of these flags, with nixlbench's defaults. */
export const nixlbenchFlagOptions: OptionSpec = {
  mode: { type: 'string', default: 'SG' },
  ...Object.fromEntries(NIXLBENCH_BOOLEANS.map((name) => [name, { type: 'boolean', default: false }])),
  progress_threads: { type: 'string', default: '0' },
  worker_type: { type: 'string', default: 'nixl' },
  device_list: { type: 'string', default: 'all' },
  runtime_type: { type: 'string', default: 'ETCD' },
  etcd_endpoints: { type: 'string' },
  benchmark_group: { type: 'string', default: 'default' },
  asio_address: { type: 'string', default: '127.0.0.1' },
  asio_port: { type: 'string', default: '12345' },
  config_file: { type: 'string' },
};

/**
 * nixlbench flags the engine cannot honour, and why. An unknown flag that is one of these is
 * refused with its reason instead of parseArgs' generic message.
 */
export const REFUSED_NIXLBENCH_FLAGS: Record<string, string> = {
  prepared_xfer: "the engine builds a transfer one way only (prepare, then execute), so nixlbench's alternative prepXferDlist+makeXferReq path has no counterpart to measure",
  use_device_api: 'transfers initiated from GPU kernels (the NIXL device API) are not part of this sweep',
  randomize_location_mode: 'it randomises file offsets of storage backends, and the engine has no storage backends',
  randomize_location_mode_seed: 'it seeds randomize_location_mode, which only storage backends use',
  ...Object.fromEntries(
    [
      'filepath', 'filenames', 'num_files', 'storage_enable_direct', 'gds_batch_pool_size', 'gds_batch_limit', 'gds_mt_num_threads',
      'posix_api_type', 'posix_ios_pool_size', 'posix_kernel_queue_size', 'hf3fs_iopool_size', 'gusli_client_name',
      'gusli_max_simultaneous_requests', 'gusli_config_file', 'gusli_device_byte_offsets', 'gusli_device_security', 'gusli_try_use_uring',
      'obj_access_key', 'obj_secret_key', 'obj_session_token', 'obj_bucket_name', 'obj_scheme', 'obj_region', 'obj_use_virtual_addressing',
      'obj_endpoint_override', 'obj_req_checksum', 'obj_ca_bundle', 'obj_crt_min_limit', 'obj_accelerated_enable', 'obj_accelerated_type',
      'azure_blob_account_url', 'azure_blob_container_name', 'azure_blob_connection_string', 'infinia_config_file',
    ].map((flag) => [flag, 'it configures a NIXL storage backend (GDS, POSIX, OBJ, HF3FS, GUSLI, Azure, Infinia), and the engine moves memory only']),
  ),
  gpunetio_device_list: 'it configures the DOCA GPUNetIO backend, which the engine does not have',
  gpunetio_oob_list: 'it configures the DOCA GPUNetIO backend, which the engine does not have',
};

/** Backends whose registration does real work (pinning, keys): --reregister_mem measures it there. */
const REGISTERING_BACKENDS = ['ucx', 'libfabric'];

type Values = Record<string, string | boolean | string[] | undefined>;

export function parseNixlbenchFlags(v: Values, backend: string, backendGiven: boolean, segTypes: readonly string[]): NixlbenchFlags {
  const str = (name: string) => v[name] as string;
  const notes: string[] = [];
  const mode = choiceOption('mode', str('mode'), sweepModes, false); // nixlbench compares exactly
  const vram = segTypes.includes('VRAM');
  const dram = segTypes.includes('DRAM');

  if (str('worker_type') !== 'nixl') {
    throw new UsageError(`--worker_type ${str('worker_type')}: only nixl (the transfer engine) runs here; the NVSHMEM worker has no counterpart`);
  }
  const progressThreads = gflagsInteger('progress_threads', str('progress_threads'), 'uint64');
  if (progressThreads > 0) {
    throw new UsageError(`--progress_threads ${progressThreads}: NIXL's UCX threadpool of dedicated workers has no counterpart here (use --enable_pt for a progress thread)`);
  }
  if (v.config_file !== undefined) {
    throw new UsageError(`--config_file ${str('config_file')}: nixlbench's TOML config files are not read here; pass the parameters as flags`);
  }

  const reregisterMem = v.reregister_mem === true;
  let recreateXfer = v.recreate_xfer === true;
  if (reregisterMem && !REGISTERING_BACKENDS.includes(backend)) {
    throw new UsageError(
      `--reregister_mem: the ${backend} backend registers nothing per buffer (${backend === 'shm' ? 'peers map the shared segment' : 'peers open the allocation itself'}), ` +
        `so there is no registration cost to measure; use --backend ucx`,
    );
  }
  if (reregisterMem && !recreateXfer) {
    // nixlbench's own rule and message
    notes.push('reregister_mem requires per-iteration request creation. Setting recreate_xfer to true.');
    recreateXfer = true;
  }
  const progressThread = v.enable_pt === true;
  if (progressThread && backend !== 'ucx') {
    throw new UsageError(`--enable_pt: a progress thread drives UCX workers (NIXL's UCX progress thread); the ${backend} backend has none to drive, use --backend ucx`);
  }
  const vmm = v.enable_vmm === true;
  if (vmm && !vram) notes.push('--enable_vmm: no VRAM buffers in this run (both seg types are DRAM), so nothing is allocated through CUDA VMM');
  const hugepages = v.use_hugepages === true;
  if (hugepages && !dram) notes.push('--use_hugepages: no DRAM buffers in this run (both seg types are VRAM), so nothing is allocated on huge pages');

  let deviceList: string[] | undefined;
  if (str('device_list') !== 'all') {
    if (backend !== 'ucx') {
      const which = backendGiven ? `the ${backend} backend` : `the default backend (${backend})`;
      throw new UsageError(`--device_list names the NICs UCX uses (UCX_NET_DEVICES per rank); ${which} uses no NIC, use --backend ucx`);
    }
    deviceList = str('device_list').split(',').map((d) => d.trim()).filter((d) => d !== '');
  }

  const given = ['runtime_type', 'etcd_endpoints', 'benchmark_group', 'asio_address', 'asio_port'].filter(
    (name) => v[name] !== undefined && v[name] !== nixlbenchFlagOptions[name].default,
  );
  const runtime: SweepRuntime = {
    type: choiceOption('runtime_type', str('runtime_type'), runtimeTypes, false),
    etcdEndpoints: v.etcd_endpoints as string | undefined,
    benchmarkGroup: str('benchmark_group'),
    asioAddress: str('asio_address'),
    asioPort: gflagsInteger('asio_port', str('asio_port'), 'uint32'),
    given,
  };
  // nixlbench's validateAsioPort
  if (runtime.asioPort > 65535) throw new UsageError(`Invalid value for --asio_port: ${runtime.asioPort} (must be <= 65535)`);
  return { mode, recreateXfer, reregisterMem, progressThread, vmm, hugepages, runtime, deviceList, notes };
}

/** A flag the sweep does not have: one of nixlbench's with its reason, or gflags' unknown flag. */
export function unknownFlag(name: string): UsageError {
  if (REFUSED_NIXLBENCH_FLAGS[name]) return new UsageError(`--${name} is a nixlbench flag the sweep does not take: ${REFUSED_NIXLBENCH_FLAGS[name]}`);
  return new UsageError(`unknown command line flag '${name}' (gflags' words; disagg-bench sweep --help lists the flags)`);
}
