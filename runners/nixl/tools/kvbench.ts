// kvbench's CT perftests (NIXL's benchmark/kvbench), one process per rank under srun,
// each command line as kvbench's click definitions take it (main.py; the seed's tools/perf/cli.py
// has the same options):
//   python3 main.py [--debug] ct-perftest CONFIG [--verify-buffers] [--print-recv-buffers]
//   python3 main.py [--debug] sequential-ct-perftest CONFIG [--verify-buffers] [--print-recv-buffers] --json-output-path P
// (ct-perftest has no --json-output-path: its results are the table rank 0 logs), with torchrun's
// variables set from srun's, and the job's etcd in NIXL_ETCD_ENDPOINTS.
import path from 'node:path';
import type { ToolSpec } from '../tool-spec.ts';
import { ascending, etcdOf, safeTag, toolPath, type EtcdSetting, type ToolJob } from './tool-job.ts';

export type KvbenchCommand = 'ct-perftest' | 'sequential-ct-perftest';

export interface KvbenchSection {
  python?: string;
  /** The CLI script: tools/perf/cli.py (the seed's layout) or benchmark/kvbench/main.py. */
  script: string;
  command: KvbenchCommand;
  /** The tool's own YAML (relative to the config's folder). */
  config_file: string;
  verify_buffers?: boolean;
  print_recv_buffers?: boolean;
  /** kvbench's group option --debug (debug logging). */
  debug?: boolean;
  /** More options of the command, each one kvbench's command takes (KVBENCH_OPTIONS). */
  extra_args?: string[];
  etcd?: EtcdSetting;
  env?: Record<string, string>;
}

/** The options each kvbench command takes (click), and those of the group before it. */
export const KVBENCH_OPTIONS: Record<KvbenchCommand | 'group', { flags: string[]; valued: string[] }> = {
  group: { flags: ['--debug', '--no-debug'], valued: [] },
  'ct-perftest': { flags: ['--verify-buffers', '--no-verify-buffers', '--print-recv-buffers', '--no-print-recv-buffers'], valued: [] },
  'sequential-ct-perftest': { flags: ['--verify-buffers', '--no-verify-buffers', '--print-recv-buffers', '--no-print-recv-buffers'], valued: ['--json-output-path'] },
};

export const KVBENCH_JSON = 'kvbench.json';

/** What is wrong with extra_args for the command (an option it does not take, one the adapter sets), or nothing. */
export function checkKvbenchExtraArgs(command: KvbenchCommand, words: readonly string[]): string | undefined {
  const { flags, valued } = KVBENCH_OPTIONS[command];
  for (let i = 0; i < words.length; i++) {
    const name = words[i].split('=')[0];
    if (name === '--json-output-path') return `--json-output-path is set by the adapter (the job's ${KVBENCH_JSON})`;
    if (flags.includes(name)) continue;
    if (valued.includes(name)) {
      if (!words[i].includes('=')) i++;
      continue;
    }
    return `kvbench's ${command} takes no option ${JSON.stringify(words[i])} (it takes ${[...flags, ...valued].join(', ')})`;
  }
  return undefined;
}

export function kvbenchArgs(section: KvbenchSection, configDir: string, logDir: string): string[] {
  return [
    ...(section.debug ? ['--debug'] : []),
    section.command,
    path.resolve(configDir, section.config_file),
    ...(section.verify_buffers ? ['--verify-buffers'] : []),
    ...(section.print_recv_buffers ? ['--print-recv-buffers'] : []),
    ...(section.command === 'sequential-ct-perftest' ? ['--json-output-path', path.join(logDir, KVBENCH_JSON)] : []),
    ...(section.extra_args ?? []),
  ];
}

export function kvbenchSpec(section: KvbenchSection, job: ToolJob): ToolSpec {
  const namespace = `/nixl/disagg-${safeTag(job.tag)}/`;
  const command = [section.python ?? 'python3', toolPath(job.configDir, section.script), ...kvbenchArgs(section, job.configDir, job.logDir)];
  const etcd = etcdOf(section.etcd, 'private', job, namespace);
  return {
    tool: 'kvbench',
    commands: ascending(job.ranks).map(() => command),
    env: { ...(etcd ? { NIXL_ETCD_ENDPOINTS: '{etcd}', NIXL_ETCD_NAMESPACE: namespace } : {}), ...section.env },
    torchEnv: true,
    etcd,
    startOrder: ascending(job.ranks),
    ordering: { kind: 'delay', seconds: 0 },
    logDir: job.logDir,
  };
}
