// NIXL EP perf tests, one launcher per node (it starts --num-processes ranks itself):
//   python3 test_data_plane.py --num-processes=8 --mode=e2e --tokens=512 ...
//   python3 test_control_plane.py --num-processes=8 --experts-per-rank=8,32 --use-tcp-store
// Multi-node through WORLD_SIZE (nodes), RANK (node rank), MASTER_ADDR (first node); the data
// plane's etcd is the job's own (NIXL_ETCD_ENDPOINTS, namespace per job). The metadata exchange and
// NIC discovery flags changed between versions of the tests (--use-tcp-store / --skip-nic-discovery,
// later --use-etcd / --discover-nics with the defaults flipped): the config says what it wants and
// each task picks the installed version's words from its --help (flag-probe.ts).
import path from 'node:path';
import type { FlagChoice } from '../flag-probe.ts';
import type { ToolSpec } from '../tool-spec.ts';
import { argparseWords, ascending, etcdOf, safeTag, toolPath, type EtcdSetting, type ToolJob } from './tool-job.ts';

export interface NixlEpPerfSection {
  python?: string;
  /** The folder holding test_data_plane.py and test_control_plane.py. */
  dir: string;
  plane: 'data' | 'control';
  /** --num-processes: ranks (GPUs) per node. */
  processes_per_node: number;
  mode?: 'dispatch' | 'combine' | 'e2e';
  tokens?: number;
  hidden?: number;
  experts_per_rank?: number | number[];
  topk?: number;
  nvlink_backend?: 'ipc' | 'nixl' | 'none';
  warmup?: number;
  iters?: number;
  /** NIC discovery off (older tests' --skip-nic-discovery; the current ones skip by default). Default: the tool's. */
  skip_nic_discovery?: boolean;
  /** NIC discovery on (current tests' --discover-nics): the opposite of skip_nic_discovery. */
  discover_nics?: boolean;
  /** Control plane: one operation only. */
  test?: string;
  /** The TCP store for metadata instead of etcd. Default: true for the control plane (as the seed runs it), the tool's for the data plane. */
  use_tcp_store?: boolean;
  /** etcd for metadata (current tests' --use-etcd): the opposite of use_tcp_store. */
  use_etcd?: boolean;
  etcd?: EtcdSetting;
  env?: Record<string, string>;
}

export function nixlEpPerfSpec(section: NixlEpPerfSection, job: ToolJob): ToolSpec {
  const control = section.plane === 'control';
  const experts = section.experts_per_rank === undefined ? undefined : [section.experts_per_rank].flat().join(',');
  const script = path.join(toolPath(job.configDir, section.dir), control ? 'test_control_plane.py' : 'test_data_plane.py');
  const python = section.python ?? 'python3';
  const flags = control
    ? argparseWords({ 'num-processes': section.processes_per_node, 'experts-per-rank': experts, test: section.test, warmup: section.warmup, rounds: section.iters })
    : argparseWords({
        'num-processes': section.processes_per_node,
        mode: section.mode,
        tokens: section.tokens,
        hidden: section.hidden,
        'experts-per-rank': experts,
        topk: section.topk,
        'nvlink-backend': section.nvlink_backend,
        warmup: section.warmup,
        iters: section.iters,
      });
  const tcpStore = wantsTcpStore(section);
  const namespace = `/nixl/disagg-${safeTag(job.tag)}/`;
  const etcd = etcdOf(section.etcd, tcpStore === true ? 'none' : 'private', job, namespace);
  return {
    tool: 'nixl-ep-perf',
    commands: ascending(job.ranks).map(() => [python, script, ...flags]),
    env: { ...(etcd ? { NIXL_ETCD_ENDPOINTS: '{etcd}', NIXL_ETCD_NAMESPACE: namespace } : {}), ...section.env },
    torchEnv: true, // RANK = node rank, WORLD_SIZE = nodes: one task per node
    etcd,
    startOrder: ascending(job.ranks),
    ordering: { kind: 'delay', seconds: 0 },
    logDir: job.logDir,
    probe: { help: [python, script, '--help'], choices: epFlagChoices(tcpStore, wantsNicDiscovery(section)) },
  };
}

/** true: the TCP store; false: etcd; undefined: the tool's default. The control plane defaults to the TCP store, as the seed runs it. */
export function wantsTcpStore(s: NixlEpPerfSection): boolean | undefined {
  return s.use_tcp_store ?? (s.use_etcd === undefined ? (s.plane === 'control' ? true : undefined) : !s.use_etcd);
}

export function wantsNicDiscovery(s: NixlEpPerfSection): boolean | undefined {
  return s.discover_nics ?? (s.skip_nic_discovery === undefined ? undefined : !s.skip_nic_discovery);
}

/** The two settings in both versions' words (older default: etcd and NIC discovery; current: TCP store, no discovery). */
export function epFlagChoices(tcpStore: boolean | undefined, nicDiscovery: boolean | undefined): FlagChoice[] {
  return [
    {
      meaning: tcpStore === undefined ? "the tool's default metadata exchange" : tcpStore ? 'the TCP store for metadata' : 'etcd for metadata',
      newer: '--use-etcd',
      older: '--use-tcp-store',
      newerWords: tcpStore === false ? ['--use-etcd'] : [],
      olderWords: tcpStore === true ? ['--use-tcp-store'] : [],
    },
    {
      meaning: nicDiscovery === undefined ? "the tool's default NIC discovery" : nicDiscovery ? 'GPU-NIC discovery' : 'no GPU-NIC discovery',
      newer: '--discover-nics',
      older: '--skip-nic-discovery',
      newerWords: nicDiscovery === true ? ['--discover-nics'] : [],
      olderWords: nicDiscovery === false ? ['--skip-nic-discovery'] : [],
    },
  ];
}
