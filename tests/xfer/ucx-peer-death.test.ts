// A ucx peer that dies (SIGKILL) is named by the surviving rank's transfers, which fail instead of
// hanging: towards another node (peer error handling, tcp) for a READ already in flight, and on
// the same node (shared memory, no error handling) for a transfer posted after the death. The
// moment of death is chosen by the survivor (the victim is blocked until told), so nothing
// depends on timing. Real UCX, real processes.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/local-launch.ts';

const fixture = fileURLToPath(new URL('../fixtures/xfer/ucx-peer-death-rank.ts', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function run(sameNode: boolean) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ucx-peer-death-'));
  dirs.push(dir);
  const lines: string[] = [];
  const result = await spawnLocalRanks(2, nodeEntryArgv(fixture, [dir]), {
    env: { XFER_TIMEOUT_S: '30', XFER_UCX_ERROR_HANDLING: undefined, XFER_UCX_MEMORY: undefined, XFER_UCX_FLAGS: undefined },
    rankEnv: (rank) => ({ XFER_NODE: sameNode ? 'one-node' : `pretend-node-${rank}` }),
    stopAfterMs: 60_000, // the survivor reports on its own; the launcher must not stop it first
    onLine: (rank, _stream, line) => lines.push(`[rank ${rank}] ${line}`),
  });
  const output = lines.join('\n');
  expect(result.exits[1], output).toMatchObject({ signal: 'SIGKILL' });
  expect(result.exits[0].code, output).toBe(0);
  const json = lines.find((l) => l.startsWith('[rank 0] {'));
  expect(json, output).toBeDefined();
  return JSON.parse(json!.slice('[rank 0] '.length));
}

describe('ucx: a peer that dies', () => {
  it('on another node: the READ in flight fails naming it, and so does the next transfer', { timeout: 120_000 }, async () => {
    const r = await run(false);
    expect(r.mode).toBe('peer');
    expect(r.inFlightBeforeDeath).toBe(true);
    expect(r.whilePending).toMatch(/^TransferError: ucx: transfer with rank 1 failed: /);
    expect(r.afterDeath).toMatch(/^TransferError: ucx: transfer with rank 1 failed: rank 1 died/);
  });

  it('on the same node (shared memory): a transfer after its death is refused naming it', { timeout: 120_000 }, async () => {
    const r = await run(true);
    expect(r.mode).toBe('none');
    expect(r.afterDeath).toMatch(/^TransferError: ucx: transfer with rank 1 failed: rank 1 died \(its store connection was lost\)/);
  });
});
