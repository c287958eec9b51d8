// nixlbench (NIXL's benchmark/nixlbench): its exact command line from a config, for every task:
//   nixlbench --etcd_endpoints <the job's etcd> --benchmark_group <per job> --backend UCX
//             --initiator_seg_type VRAM ... (every option of `options:` as --name=value)
// Its etcd runtime ranks processes by arrival (rank < num_initiator_dev: initiator; rank 0 prints
// the table), so tasks start in `start_order`, each once the ones before it have registered. It
// keeps its state under the namespace `xferbench/<group>/`: barriers at `<namespace>barrier/...`,
// but the registration keys (lock, size, rank/<n>) at `<namespace>/<name>`, with a second slash
// (etcd_rt.h's makeKey appends "/" + name to a namespace that already ends in one; so in every
// release since --benchmark_group exists, NIXL 0.5.0). The count a task waits on is that `size`.
// `runtime: ASIO` runs its other runtime instead (two processes, no etcd):
//   nixlbench --runtime_type ASIO --asio_address <listener> --asio_port <picked> --backend UCX ...
// where the first task of `start_order` binds the port (rank 0) and the other connects once it
// listens (runners/nixl/asio-turn.ts).
import { parseSize } from '../../common/size.ts';
import type { ToolSpec } from '../tool-spec.ts';
import { ascending, etcdOf, gflagsWords, safeTag, toolPath, type EtcdSetting, type ToolJob } from './tool-job.ts';

export interface NixlbenchSection {
  /** The binary (default `nixlbench` on PATH). */
  path?: string;
  etcd?: EtcdSetting;
  /** nixlbench's --runtime_type: ETCD (default: the job's etcd) or ASIO (2 processes, a TCP socket). */
  runtime?: 'ETCD' | 'ASIO';
  /** Task indices in registration order = nixlbench ranks (default 0, 1, ...). */
  start_order?: number[];
  /** How long a task waits for those before it to register (default 120 s). */
  registration_timeout_s?: number;
  /** nixlbench flags without the dashes: { backend: LIBFABRIC, initiator_seg_type: VRAM, max_block_size: 64M, ... }. */
  options?: Record<string, string | number | boolean>;
  env?: Record<string, string>;
}

/** Flags that take bytes: a config may write them with binary units. */
const SIZE_FLAGS = ['total_buffer_size', 'start_block_size', 'max_block_size'];
/** Set by the adapter; a config cannot. */
export const NIXLBENCH_RESERVED = ['etcd_endpoints', 'runtime_type', 'asio_address', 'asio_port'];

/** A registration key of nixlbench's etcd runtime: `xferbench/<group>//size` (see above). */
export function registrationKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export function nixlbenchSpec(section: NixlbenchSection, job: ToolJob, defaultBackend: string): ToolSpec {
  const options = { ...(section.options ?? {}) };
  for (const flag of SIZE_FLAGS) if (typeof options[flag] === 'string') options[flag] = parseSize(options[flag] as string);
  const group = String(options.benchmark_group ?? `disagg-${safeTag(job.tag)}`);
  delete options.benchmark_group;
  const backend = String(options.backend ?? defaultBackend.toUpperCase());
  delete options.backend;
  const prefix = `xferbench/${group}/`;
  const binary = toolPath(job.configDir, section.path ?? 'nixlbench');
  const timeoutS = section.registration_timeout_s ?? 120;
  const common = { tool: 'nixlbench' as const, env: section.env ?? {}, startOrder: section.start_order ?? ascending(job.ranks), logDir: job.logDir };
  if (section.runtime === 'ASIO') {
    const command = [binary, '--runtime_type', 'ASIO', '--asio_address', '{asio_address}', '--asio_port', '{asio_port}', '--backend', backend, ...gflagsWords(options)];
    return { ...common, commands: ascending(job.ranks).map(() => command), ordering: { kind: 'listen', timeoutS } };
  }
  const command = [binary, '--etcd_endpoints', '{etcd}', '--benchmark_group', group, '--backend', backend, ...gflagsWords(options)];
  return {
    ...common,
    commands: ascending(job.ranks).map(() => command),
    etcd: etcdOf(section.etcd, 'private', job, prefix),
    ordering: { kind: 'registration', sizeKey: registrationKey(prefix, 'size'), timeoutS },
  };
}
