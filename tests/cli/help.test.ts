// Every command of `disagg-bench` (found from the command table, so a new command is walked as it
// lands) answers --help and -h with its usage on stdout and exit 0, without running anything, and
// refuses an option it does not have in one sentence naming it. Through the
// package's bin, as a user runs it. OUTPUT_PATH and WORK_DIR point where nothing exists: help
// reads no settings, and a command that ran instead would say so.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { commands } from '../../framework/cli.ts';

const root = path.resolve(import.meta.dirname, '../..');
const empty = mkdtempSync(path.join(tmpdir(), 'cli-help-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

async function bin(args: string[]) {
  const r = await execa('node', [path.join(root, 'bin/disagg-bench.js'), ...args], {
    cwd: empty,
    reject: false,
    timeout: 120_000,
    env: { OUTPUT_PATH: path.join(empty, 'no-output'), WORK_DIR: path.join(empty, 'no-work-dir') },
  });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const names = Object.keys(commands);

describe('every command answers --help and -h with its usage, exit 0', () => {
  it('the table has the commands the README names', () => {
    for (const name of ['list', 'validate', 'serve-bench', 'report', 'cleanup', 'ct-perftest', 'sequential-ct-perftest', 'matgen', 'sweep', 'ep', 'kvpipe', 'cache-engine', 'gpu-check', 'nixl-tool']) {
      expect(names).toContain(name);
    }
  });

  it.each(names)('%s', async (name) => {
    const [help, h] = await Promise.all([bin([name, '--help']), bin([name, '-h'])]);
    for (const r of [help, h]) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: disagg-bench ${name}( |$)`));
    }
    expect(h.stdout).toBe(help.stdout);
    // help among other words, even faulty ones, still answers (help wins, as gflags and argparse do)
    const amid = await bin([name, '--zz-no-such-option', 'extra', '--help']);
    expect(amid.code).toBe(0);
    expect(amid.stdout).toBe(help.stdout);
    expect(readdirSync(empty)).toEqual([]); // nothing ran: no output folder, no run claim
  });
});

describe("a command of subcommands answers each one's --help with its usage", () => {
  it('nixl-tool: each step its own line, naming the options it takes', async () => {
    const whole = (await bin(['nixl-tool', '--help'])).stdout;
    for (const [step, options] of [['etcd-start', ['--dir', '--prefix', '--host']], ['etcd-wipe', ['--endpoints', '--prefix']], ['etcd-stop', ['--dir']], ['run', []], ['report', []], ['node-artefacts', ['--dir']]] as const) {
      const r = await bin(['nixl-tool', step, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: disagg-bench nixl-tool ${step} `));
      expect(r.stdout.trim().split('\n')).toHaveLength(1);
      for (const o of options) expect(r.stdout, `${step} ${o}`).toContain(o);
      expect(whole).toContain(r.stdout.trim().replace(/^usage: /, ''));
    }
  });
});

describe('every command refuses an option it does not have, in one sentence naming it', () => {
  it.each(names)('%s', async (name) => {
    const r = await bin([name, ...(name === 'nixl-tool' ? ['etcd-stop'] : []), '--zz-no-such-option']);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    const first = r.stderr.split('\n')[0];
    expect(first).toMatch(/zz-no-such-option/);
    expect(first.replace(/\(.*\)/, '').replace(/"[^"]*"|'[^']*'/g, 'X')).not.toMatch(/\.\s+\S/); // one sentence
  });
});
