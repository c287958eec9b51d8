// The nixl-ep-perf adapter: the EP tests renamed their metadata and NIC flags
// (--use-tcp-store / --skip-nic-discovery, later --use-etcd / --discover-nics with the defaults
// flipped); each task asks the installed tool's --help and passes the words that mean what the
// config asked for. The tool is a STAND-IN (tests/fixtures/nixl/standin-ep-perf.sh: prints either
// version's help and echoes its arguments), run through the real task step.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { helpHas, pickFlagWords } from '../../runners/nixl/flag-probe.ts';
import { runToolTask } from '../../runners/nixl/tool-task.ts';
import { TOOL_SPEC_FILE } from '../../runners/nixl/tool-spec.ts';
import { epFlagChoices, nixlEpPerfSpec, type NixlEpPerfSection } from '../../runners/nixl/tools/nixl-ep-perf.ts';
import { nixlEpPerfKind } from '../../framework/types/nixl/kinds/tool.ts';

const standin = path.resolve(import.meta.dirname, '../fixtures/nixl/standin-ep-perf.sh');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ep-perf-flags-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Runs task 0 of a one-node job of the stand-in as `version`; the words it was given. */
async function argvOf(section: Partial<NixlEpPerfSection>, version: 'older' | 'newer' | 'neither', name: string): Promise<{ code: number; log: string }> {
  const logDir = path.join(scratch, name);
  fs.mkdirSync(logDir, { recursive: true });
  const spec = nixlEpPerfSpec(
    { python: standin, dir: '/ws/nixl_ep_perf', plane: 'data', processes_per_node: 2, etcd: 'none', env: { STANDIN_EP_VERSION: version }, ...section },
    { logDir, configDir: scratch, ranks: 1, nodes: 1, tag: name },
  );
  const specFile = path.join(logDir, TOOL_SPEC_FILE);
  fs.writeFileSync(specFile, JSON.stringify(spec));
  const code = await runToolTask(specFile, { ...process.env, SLURM_PROCID: '0', SLURM_NTASKS: '1', SLURM_LOCALID: '1' });
  return { code, log: fs.readFileSync(path.join(logDir, 'nixl-ep-perf-task0.log'), 'utf8') };
}

describe('nixl-ep-perf: flags chosen by probing --help', () => {
  it('finds a flag in argparse help as an option of its own', () => {
    expect(helpHas('usage: x [--use-etcd] [--discover-nics]', '--use-etcd')).toBe(true);
    expect(helpHas('  --use-etcd-v2  other', '--use-etcd')).toBe(false);
    expect(pickFlagWords('usage: [--use-tcp-store] [--skip-nic-discovery]', epFlagChoices(true, false), 't')).toEqual(['--use-tcp-store', '--skip-nic-discovery']);
    expect(pickFlagWords('usage: [--use-etcd] [--discover-nics]', epFlagChoices(true, false), 't')).toEqual([]);
    expect(pickFlagWords('usage: [--use-etcd] [--discover-nics]', epFlagChoices(false, true), 't')).toEqual(['--use-etcd', '--discover-nics']);
    expect(pickFlagWords('usage: [--use-tcp-store] [--skip-nic-discovery]', epFlagChoices(false, true), 't')).toEqual([]);
  });

  it('TCP store, no NIC discovery: the older tool gets --use-tcp-store --skip-nic-discovery, the newer nothing (its defaults)', async () => {
    const section = { use_tcp_store: true, skip_nic_discovery: true };
    const older = await argvOf(section, 'older', 'older-defaults');
    expect(older.code).toBe(0);
    expect(older.log).toContain('STANDIN test_data_plane.py argv: --num-processes=2 --use-tcp-store --skip-nic-discovery');
    const newer = await argvOf(section, 'newer', 'newer-defaults');
    expect(newer.log).toMatch(/STANDIN test_data_plane\.py argv: --num-processes=2\s*$/m);
  });

  it('etcd and NIC discovery: the newer tool gets --use-etcd --discover-nics (its own names work too), the older nothing', async () => {
    const newer = await argvOf({ use_etcd: true, discover_nics: true }, 'newer', 'newer-etcd');
    expect(newer.log).toContain('argv: --num-processes=2 --use-etcd --discover-nics');
    const older = await argvOf({ use_tcp_store: false, skip_nic_discovery: false }, 'older', 'older-etcd');
    expect(older.log).toMatch(/argv: --num-processes=2\s*$/m);
  });

  it('a tool that knows neither name fails its task with one sentence; contradicting settings are refused in the config', async () => {
    const r = await argvOf({ use_tcp_store: true }, 'neither', 'neither');
    expect(r.code).toBe(2);
    expect(r.log).toMatch(/cannot tell which flags the tool takes: .*its --help names neither --use-etcd nor --use-tcp-store, so the TCP store for metadata cannot be asked for/);
    const issues = nixlEpPerfKind.rules!({ benchmark: { kind: 'nixl-ep-perf', ranks: 1, nodes: 1 }, nixl_ep_perf: { dir: '/abs', plane: 'data', processes_per_node: 2, use_tcp_store: true, use_etcd: true } }, scratch);
    expect(issues.map((i) => i.message)).toEqual(['use_etcd: true contradicts use_tcp_store: true (one metadata exchange: give one of them)']);
  });
});
