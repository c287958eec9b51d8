// test-report.txt of a tool's job (NIXL's benchmarking suite keeps one): what ran where, in which order, against
// which etcd namespace, how each task ended, and the artefacts the job left. Written by the job's
// cleanup, so it exists whether the tool passed, failed or never started.
import fs from 'node:fs';
import path from 'node:path';
import { fillPlaceholders, taskLog, taskStatus, type ToolSpec } from './tool-spec.ts';
import { ETCD_FILES, endpointOf } from './etcd.ts';
import { ASIO_ENDPOINT_FILE } from './asio-turn.ts';
import { READ_LIMITS, readTextFileSync } from '../common/read-file.ts';

export const TEST_REPORT = 'test-report.txt';

export function writeToolReport(spec: ToolSpec): string {
  const lines = [`disagg-bench nixl-tool report: ${spec.tool}, ${spec.commands.length} task(s), ${new Date().toISOString()}`];
  let endpoint = spec.etcd?.endpoints;
  if (spec.etcd) {
    let where = spec.etcd.endpoints ?? '';
    if (spec.etcd.mode === 'private') {
      try {
        endpoint = endpointOf(spec.etcd.dir!);
        where = `${endpoint} (log ${path.join(spec.etcd.dir!, ETCD_FILES.log)})`;
      } catch {
        where = 'did not start';
      }
    }
    lines.push(`etcd: ${spec.etcd.mode} ${where}; namespace ${spec.etcd.prefix} wiped before the run`);
  } else {
    lines.push('etcd: none');
  }
  const order =
    spec.ordering.kind === 'registration'
      ? 'each after the ones before it registered (registration order = the tool\'s rank)'
      : spec.ordering.kind === 'listen'
        ? `the others once the first listened on its ASIO port (${asioEndpointOf(spec.logDir) ?? 'never published'})`
        : `${spec.ordering.seconds} s apart`;
  const published = spec.ordering.kind === 'listen' ? asioEndpointOf(spec.logDir) : undefined;
  const asio = published ? { address: published.slice(0, published.lastIndexOf(':')), port: Number(published.slice(published.lastIndexOf(':') + 1)) } : undefined;
  lines.push(`start order: tasks ${spec.startOrder.join(', ')}, ${order}`);
  spec.commands.forEach((command, task) => {
    const status = read(path.join(spec.logDir, taskStatus(spec, task)))?.trim();
    lines.push(`task ${task}: ${status === undefined ? 'did not finish (no status)' : `exit code ${status}`}; output ${taskLog(spec, task)}`);
    lines.push(`  ${command.map((word) => fillPlaceholders(word, { etcd: endpoint, task, asio })).join(' ')}`);
  });
  const artefacts = fs.existsSync(spec.logDir) ? fs.readdirSync(spec.logDir).filter((f) => /^(fi_info|gpu-info|efa-devices)-.+\.txt$/.test(f)).sort() : [];
  lines.push(`node artefacts: ${artefacts.length ? artefacts.join(', ') : 'none'}`);
  const file = path.join(spec.logDir, TEST_REPORT);
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The ASIO listener's `address:port`, as the first task published it. */
function asioEndpointOf(logDir: string): string | undefined {
  return read(path.join(logDir, ASIO_ENDPOINT_FILE))?.trim();
}

function read(file: string): string | undefined {
  try {
    return readTextFileSync(file, READ_LIMITS.log);
  } catch {
    return undefined;
  }
}
