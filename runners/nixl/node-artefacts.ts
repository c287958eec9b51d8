// What NIXL's benchmarking suite keeps of each node next to the tool's output: the libfabric providers (fi_info),
// the GPU listing (nvidia-smi) and the EFA/RDMA devices. A missing tool is written down in its
// file, never fatal: the benchmark may not need it.
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';

interface Probe {
  file: string;
  commands: string[][];
}

const PROBES: Probe[] = [
  { file: 'fi_info', commands: [['fi_info'], ['fi_info', '-p', 'efa']] },
  { file: 'gpu-info', commands: [['nvidia-smi', '-L'], ['nvidia-smi', 'topo', '-m'], ['nvidia-smi']] },
  { file: 'efa-devices', commands: [['fi_info', '-p', 'efa', '-t', 'FI_EP_RDM'], ['ibv_devices'], ['ls', '-l', '/sys/class/infiniband']] },
];

/** Writes <file>-<node>.txt per probe into `dir`; returns the files written. */
export async function collectNodeArtefacts(dir: string, node: string): Promise<string[]> {
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const probe of PROBES) {
    const sections: string[] = [];
    for (const [command, ...args] of probe.commands) {
      const r = await execa(command, args, { reject: false, all: true, timeout: 30_000, stdin: 'ignore' });
      const how = (r as { code?: string }).code === 'ENOENT' ? `${command}: not installed on ${node}` : r.exitCode === 0 ? '' : `exit code ${r.exitCode ?? r.signal}`;
      sections.push(`$ ${[command, ...args].join(' ')}${how ? `   (${how})` : ''}\n${String(r.all ?? '').trimEnd()}`);
    }
    const file = path.join(dir, `${probe.file}-${node}.txt`);
    fs.writeFileSync(file, `${sections.join('\n\n')}\n`);
    written.push(file);
  }
  return written;
}
