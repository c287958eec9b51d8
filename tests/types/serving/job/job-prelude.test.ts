// The serving job's prelude (framework/types/serving/job/job-prelude.sh) on its own, in real bash:
// how it stops the steps it started.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

const prelude = fileURLToPath(new URL('../../../../framework/types/serving/job/job-prelude.sh', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'job-prelude-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('job prelude: stop_steps', () => {
  it('gives a step that ignores SIGTERM STOP_GRACE seconds of wall time, then kills it, however slow each nap is', { timeout: 60_000 }, async () => {
    // A loaded node, where every `sleep 0.1` takes 0.5 s: counted as naps. With a grace counted in
    // naps (STOP_GRACE * 10 of them) a stubborn step outlived the job's time limit under load.
    const script = `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
      source '${prelude}'
      trap - ERR
      naps=0
      sleep() { naps=$((naps + 1)); command sleep 0.5; }
      start_server STUBBORN '${dir}/stubborn.log' bash -c 'trap "" TERM; echo ready; while :; do command sleep 1; done'
      stubborn=$!
      until grep -q ready '${dir}/stubborn.log'; do command sleep 0.05; done
      stop_steps
      echo "naps=$naps"
      if kill -0 "$stubborn" 2>/dev/null; then echo "step alive"; else echo "step gone"; fi
    `;
    const run = await execa('bash', ['-c', script], { reject: false, all: true, stdin: 'ignore' });
    const output = String(run.all);
    expect(output).toContain('step gone');
    const naps = Number(/naps=(\d+)/.exec(output)?.[1]);
    // 1 s of wall time holds at most 3 naps of 0.5 s or more (a nap-counted grace took exactly 10).
    expect(naps, output).toBeGreaterThanOrEqual(1);
    expect(naps, output).toBeLessThanOrEqual(3);
  });
});
