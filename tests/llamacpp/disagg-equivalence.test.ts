// The KV cache arrives intact: with greedy sampling, a context server, a generation server and the
// router (the state handed over through the transfer engine on shm) produce token for token what
// one aggregated server produces, over prompts of several lengths (text and token ids) and output
// lengths; every request's hand-over is in the generation server's log with its bytes, and the
// context server's checksum of the state was matched on arrival (a mismatch fails the request).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { complete, startAggregated, startDisaggregated, type Deployment } from '../fixtures/llamacpp/deployment.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'llamacpp-equivalence-'));
const env = { ...process.env, DISAGG_MODEL_CACHE: path.join(tmpdir(), 'disagg-bench-test-models') };
let agg: Deployment;
let disagg: Deployment;

beforeAll(async () => {
  [agg, disagg] = await Promise.all([startAggregated(path.join(scratch, 'agg'), env), startDisaggregated(path.join(scratch, 'disagg'), env)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([agg?.stop(), disagg?.stop()]);
  rmSync(scratch, { recursive: true, force: true });
});

const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => (from + 97 * i) % 32000);
const cases: Array<{ prompt: number[] | string; out: number }> = [
  { prompt: 'The quick brown fox', out: 12 },
  { prompt: ids(1, 5), out: 8 },
  { prompt: ids(37, 1234), out: 16 },
  { prompt: ids(200, 777), out: 24 },
  { prompt: 'a', out: 1 },
];

it('the disaggregated pair generates, token for token, what one aggregated server generates', async () => {
  for (const { prompt, out } of cases) {
    const expected = await complete(agg.url, prompt, out);
    const got = await complete(disagg.url, prompt, out);
    expect(expected).toHaveLength(out);
    expect(got, `prompt of ${prompt.length} ${typeof prompt === 'string' ? 'characters' : 'ids'}`).toEqual(expected);
  }
  // Not one token repeated over and over: a degenerate model would hide a broken hand-over.
  expect(new Set(await complete(agg.url, ids(37, 1234), 16)).size).toBeGreaterThan(8);
  const handovers = disagg.logs.get('GEN_0')!.filter((l) => l.startsWith('kv_handover'));
  expect(handovers).toHaveLength(cases.length);
  // Longer prompts, more state: the bytes grow with the prompt.
  const bytes = handovers.map((l) => Number(/bytes=(\d+)/.exec(l)![1]));
  expect(bytes[3]).toBeGreaterThan(bytes[2]);
  expect(bytes[2]).toBeGreaterThan(bytes[1]);
}, 120_000);
