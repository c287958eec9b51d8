// The serving job's prelude (framework/types/serving/job/job-prelude.sh) on its own, in real bash:
// how it stops the steps it started, finds node addresses, and says why a health wait waits.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { JOB_ENDED_FILE, jobEndedFunction } from '../../../../framework/scheduler/log-folder.ts';

const prelude = fileURLToPath(new URL('../../../../framework/types/serving/job/job-prelude.sh', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'job-prelude-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('job prelude: stop_steps', () => {
  it('gives a step that ignores SIGTERM STOP_GRACE seconds of wall time, then kills it, however slow each nap is', { timeout: 60_000 }, async () => {
    // A loaded node, where every `sleep 0.1` takes 0.5 s: counted as naps. With a grace counted in
    // naps (STOP_GRACE * 10 of them) a stubborn step outlived the job's time limit under load.
    const script = `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=2; TAIL_LINES=5
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
    // 2 s of wall time hold at most 5 naps of 0.5 s or more (a nap-counted grace took exactly 20);
    // the deadline is kept in ms, so the first nap is always taken (with SECONDS + 1 it was not
    // when the wall clock's second turned just after the deadline was set).
    expect(naps, output).toBeGreaterThanOrEqual(1);
    expect(naps, output).toBeLessThanOrEqual(5);
  });
});

describe('job prelude: node addresses', () => {
  /** A STAND-IN `scontrol` (no controller to stop here): fails its first `failures` calls as a down controller does, then answers. */
  function fakeScontrol(name: string, failures: number): string {
    const bin = path.join(dir, `${name}-bin`);
    const calls = path.join(dir, `${name}.calls`);
    mkdirSync(bin, { recursive: true });
    writeFileSync(calls, '0');
    writeFileSync(path.join(bin, 'scontrol'), `#!/usr/bin/env bash
n=$(( $(cat '${calls}') + 1 )); echo "$n" > '${calls}'
if (( n <= ${failures} )); then echo 'slurm_load_node error: Unable to contact slurm controller (connect failure)' >&2; exit 1; fi
echo "NodeName=$4 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=vm State=IDLE"
`);
    chmodSync(path.join(bin, 'scontrol'), 0o755);
    return bin;
  }

  const addressOf = (bin: string, timeout: number) => execa('bash', ['-c', `
    LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
    source '${prelude}'
    trap - ERR
    NODE_ADDR_TIMEOUT=${timeout}
    pause() { command sleep 0.05; }
    echo "address=$(node_address n1)"
  `], { reject: false, stdin: 'ignore', env: { PATH: `${bin}:${process.env.PATH}` } });

  it('asks again while the controller is down, and uses its NodeAddr once it answers', { timeout: 60_000 }, async () => {
    // A controller restarted while a job started: the name n1 resolves nowhere, its NodeAddr does.
    const run = await addressOf(fakeScontrol('flaky', 2), 120);
    expect(run.stdout.split('\n')[0], run.stderr).toBe('address=127.0.0.1');
    expect(run.stderr.match(/scontrol show node n1 failed \(slurm_load_node error: Unable to contact slurm controller \(connect failure\)\); asking again/g)).toHaveLength(2);
  });

  it('falls back to the node name after NODE_ADDR_TIMEOUT s of failures, and says so', { timeout: 60_000 }, async () => {
    const run = await addressOf(fakeScontrol('down', 1_000_000), 1);
    expect(run.stdout.split('\n')[0], run.stderr).toBe('address=n1');
    expect(run.stderr).toMatch(/scontrol show node n1 failed for 1 s \(.*Unable to contact slurm controller.*\); using the name n1 as its address/);
  });
});

describe('job prelude: node addresses, other failures', () => {
  it('falls back to the node name at once when scontrol fails for another reason than an unreachable controller', { timeout: 60_000 }, async () => {
    const bin = path.join(dir, 'notfound-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'scontrol'), "#!/usr/bin/env bash\necho 'Node n1 not found' >&2; exit 1\n");
    chmodSync(path.join(bin, 'scontrol'), 0o755);
    const run = await execa('bash', ['-c', `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
      source '${prelude}'
      trap - ERR
      echo "address=$(node_address n1)"
    `], { reject: false, stdin: 'ignore', env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(run.stdout.split('\n')[0], run.stderr).toBe('address=n1');
    expect(run.stderr).toMatch(/scontrol show node n1 failed \(Node n1 not found\); using the name n1 as its address/);
    // A name that resolves nowhere (.invalid never does) is said to at once.
    const nowhere = await execa('bash', ['-c', `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
      source '${prelude}'
      trap - ERR
      echo "address=$(node_address n1.invalid)"
    `], { reject: false, stdin: 'ignore', env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(nowhere.stdout.split('\n')[0], nowhere.stderr).toBe('address=n1.invalid');
    expect(nowhere.stderr).toMatch(/warning: the name n1\.invalid does not resolve here \(getent hosts\): URLs at it cannot be reached/);
    expect(run.stderr).not.toContain('asking again');
  });

  it('a Grid Engine job\'s nodes are its parallel environment\'s hosts, in the host file\'s order, each its own address', { timeout: 60_000 }, async () => {
    // The host file as Grid Engine 8.1.9 writes it: host, slots, queue instance, processor range.
    const hostFile = path.join(dir, 'pe_hostfile');
    writeFileSync(hostFile, 'ge2 1 disagg.q@ge2 UNDEFINED\nge1 1 disagg.q@ge1 UNDEFINED\n');
    const resolve = (needed: number) => execa('bash', ['-c', `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
      source '${prelude}'
      trap - ERR
      resolve_nodes ${needed} && echo "nodes=\${NODES[*]} hosts=\${HOSTS[*]}"
    `], { reject: false, stdin: 'ignore', env: { SLURM_JOB_NODELIST: '', PE_HOSTFILE: hostFile } });
    const two = await resolve(2);
    expect(two.stdout.split('\n').filter((l) => l.startsWith('nodes=')), two.stderr).toEqual(['nodes=ge2 ge1 hosts=ge2 ge1']);
    const three = await resolve(3);
    expect(three.exitCode).toBe(1);
    expect(three.stderr).toMatch(/this job needs 3 nodes but its allocation has 2: ge2 ge1/);
  });
});

describe('job prelude: health wait', () => {
  it('writes why each health check failed into its log', { timeout: 60_000 }, async () => {
    const log = path.join(dir, 'wait.log');
    // Port 9 on 127.0.0.1 (discard): nothing listens there on a test machine.
    const run = await execa('bash', ['-c', `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=3; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
      source '${prelude}'
      trap - ERR
      wait_for_health http://127.0.0.1:9/health '${log}' || echo "gave up"
    `], { reject: false, all: true, stdin: 'ignore' });
    expect(run.all).toContain('gave up');
    expect(readFileSync(log, 'utf8')).toMatch(/not healthy yet \(\d+ s left\): .*(Failed to connect|Couldn't connect|cannot connect to 127\.0\.0\.1:9)/);
  });
});

describe('job prelude: the health wait and the job\'s time limit', () => {
  const waitFor = (jobTimeLimit: number) => execa('bash', ['-c', `
    LOG_DIR='${dir}'; HEALTH_TIMEOUT=600; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5; JOB_TIME_LIMIT=${jobTimeLimit}
    source '${prelude}'
    trap - ERR
    REPORT_MARGIN=1
    wait_for_health http://127.0.0.1:1/health '${dir}/wait-${jobTimeLimit}.log' && echo healthy || echo "status=$?"
  `], { reject: false, all: true, stdin: 'ignore' });

  it('ends before the job\'s time limit would, saying so, where the health timeout is longer', { timeout: 60_000 }, async () => {
    // Nothing listens on port 1: the router never answers. A job of 4 s (less 1 s to stop the
    // steps and 1 s to report) waits 2 s, not the 600 s of its health timeout.
    const run = await waitFor(4);
    expect(run.stdout, run.all).toContain('status=1');
    expect(run.stderr).toMatch(/Server did not become healthy within [0-2] s: the job's time limit of 4 s leaves no more of the 600 s health timeout/);
    const log = readFileSync(path.join(dir, 'wait-4.log'), 'utf8');
    expect(log).toMatch(/waiting for http:\/\/127\.0\.0\.1:1\/health \(every 1 s, up to [0-2] s: the job's time limit of 4 s leaves no more/);
    expect(log).toMatch(/not healthy yet/);
  });

  it('keeps the health timeout where the job\'s time limit leaves room for it', { timeout: 60_000 }, async () => {
    const run = await execa('bash', ['-c', `
      LOG_DIR='${dir}'; HEALTH_TIMEOUT=1; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5; JOB_TIME_LIMIT=3600
      source '${prelude}'
      trap - ERR
      wait_for_health http://127.0.0.1:1/health '${dir}/wait-long.log' || echo "status=$?"
    `], { reject: false, all: true, stdin: 'ignore' });
    expect(run.stdout, run.all).toContain('status=1');
    expect(run.stderr).toMatch(/Server did not become healthy within 1 s$/m);
  });
});

describe('job prelude: the end mark', () => {
  it('writes the job\'s exit status to job.ended as it exits, after its last line, whether it finished, failed or was stopped', { timeout: 60_000 }, async () => {
    const endOf = async (name: string, body: string) => {
      const logDir = path.join(dir, `mark-${name}`);
      mkdirSync(logDir, { recursive: true });
      const run = await execa('bash', ['-c', `
        LOG_DIR='${logDir}'; HEALTH_TIMEOUT=5; HEALTH_INTERVAL=1; STOP_GRACE=1; TAIL_LINES=5
        ${jobEndedFunction(logDir)}
        source '${prelude}'
        ${body}
      `], { reject: false, all: true, stdin: 'ignore' });
      return { exitCode: run.exitCode, output: String(run.all), mark: readFileSync(path.join(logDir, JOB_ENDED_FILE), 'utf8') };
    };
    const finished = await endOf('ok', 'log "working"; exit 0');
    expect(finished).toMatchObject({ exitCode: 0, mark: '0\n' });
    expect(finished.output).toMatch(/job finished\n?$/);
    expect(await endOf('failed', 'false')).toMatchObject({ exitCode: 1, mark: '1\n' });
    // SIGTERM from the scheduler (scancel, the time limit): the handler's status.
    expect(await endOf('stopped', 'kill -TERM $$; sleep 5')).toMatchObject({ exitCode: 143, mark: '143\n' });
  });
});
