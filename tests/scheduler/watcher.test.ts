import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { JOB_ENDED_FILE } from '../../framework/scheduler/log-folder.ts';
import { listenForEndMark } from '../../framework/scheduler/job-end-mark.ts';
import { JobWatcher } from '../../framework/scheduler/watcher.ts';
import type { JobStatus, Scheduler } from '../../framework/scheduler/scheduler.ts';
import { localDefinition } from '../../framework/scheduler/local.ts';

/** An in-memory scheduler for the polling logic alone (the backends have their own real tests). */
class ScriptedScheduler implements Scheduler {
  readonly name = 'local';
  readonly capabilities = localDefinition.capabilities;
  polls: string[][] = [];
  states = new Map<string, JobStatus>();
  failNext = 0;
  async submit(): Promise<string> { return 'x'; }
  async poll(ids: string[]) {
    this.polls.push(ids);
    if (this.failNext > 0) { this.failNext -= 1; throw new Error('squeue: error: slurm_load_jobs error: Socket timed out'); }
    const out = new Map<string, JobStatus>();
    for (const id of ids) { const s = this.states.get(id); if (s) out.set(id, s); }
    return out;
  }
  async cancel() {}
  cancelNow() { return undefined; }
  logs() { return { stdout: '', stderr: '' }; }
  async close() {}
}

const scratch = mkdtempSync(path.join(tmpdir(), 'watcher-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/** A job's log folder, as the jobs layer makes it before submitting. */
const logFolder = (name: string) => mkdtempSync(path.join(scratch, `${name}-`));

const running = (id: string): JobStatus => ({ id, state: 'RUNNING', terminal: false });
const done = (id: string): JobStatus => ({ id, state: 'COMPLETED', terminal: true, exitCode: 0 });

describe('JobWatcher', () => {
  it('polls every job in flight with one call per cycle and resolves each at its end', async () => {
    const s = new ScriptedScheduler();
    const ids = Array.from({ length: 12 }, (_, i) => `${100 + i}`);
    ids.forEach((id) => s.states.set(id, running(id)));
    const w = new JobWatcher(s, { minIntervalMs: 5, maxIntervalMs: 20 });
    const waits = ids.map((id) => w.wait(id));
    await vi.waitFor(() => expect(s.polls.length).toBeGreaterThan(0), { timeout: 30_000 });
    expect(s.polls.every((p) => p.length === 12)).toBe(true);
    ids.forEach((id) => s.states.set(id, done(id)));
    const results = await Promise.all(waits);
    expect(results.map((r) => r.state)).toEqual(ids.map(() => 'COMPLETED'));
    expect(w.cycles).toBe(s.polls.length);
    w.close();
  });

  it('tolerates a few failed polls, then rejects with the scheduler error', async () => {
    const s = new ScriptedScheduler();
    s.states.set('1', done('1'));
    s.failNext = 3;
    const errors: number[] = [];
    const w = new JobWatcher(s, { minIntervalMs: 1, maxIntervalMs: 2, maxConsecutiveFailures: 5, onPollError: (_e, n) => errors.push(n) });
    expect((await w.wait('1')).state).toBe('COMPLETED');
    expect(errors).toEqual([1, 2, 3]);
    s.states.set('2', running('2'));
    s.failNext = 100;
    await expect(w.wait('2')).rejects.toThrow(/failed 6 times in a row: squeue: error/);
    w.close();
  });

  it('turns a job the scheduler forgot into UNKNOWN after a few misses, and stops early on cannotStart', async () => {
    const s = new ScriptedScheduler();
    const w = new JobWatcher(s, { minIntervalMs: 1, maxIntervalMs: 2, maxMisses: 3, minMissSpanMs: 20 });
    const gone = await w.wait('404');
    expect(gone).toMatchObject({ state: 'UNKNOWN', terminal: true });
    s.states.set('7', { id: '7', state: 'PENDING', terminal: false, reason: 'PartitionConfig', cannotStart: 'PartitionConfig' });
    expect(await w.wait('7')).toMatchObject({ state: 'PENDING', cannotStart: 'PartitionConfig' });
    w.close();
  });

  it('reports every state change once', async () => {
    const s = new ScriptedScheduler();
    const changes: string[] = [];
    const w = new JobWatcher(s, { minIntervalMs: 1, maxIntervalMs: 2, onChange: (st) => changes.push(st.state) });
    s.states.set('1', { id: '1', state: 'PENDING', terminal: false });
    const wait = w.wait('1');
    // Each state changes only once the watcher has reported the one before (not after a guessed delay).
    await vi.waitFor(() => expect(changes).toEqual(['PENDING']), { timeout: 30_000 });
    s.states.set('1', running('1'));
    await vi.waitFor(() => expect(changes).toEqual(['PENDING', 'RUNNING']), { timeout: 30_000 });
    s.states.set('1', done('1'));
    await wait;
    expect(changes).toEqual(['PENDING', 'RUNNING', 'COMPLETED']);
    w.close();
  });

  it('reports a queued job\'s new reason (Priority, Resources, QOSMaxJobsPerUserLimit) from the same one poll per cycle', async () => {
    const s = new ScriptedScheduler();
    const heard: string[] = [];
    const w = new JobWatcher(s, { minIntervalMs: 1, maxIntervalMs: 2, onChange: (st) => heard.push(`${st.id} ${st.state} ${st.reason ?? ''}`.trim()) });
    const pending = (id: string, reason: string): JobStatus => ({ id, state: 'PENDING', terminal: false, reason });
    s.states.set('1', pending('1', 'Priority'));
    s.states.set('2', pending('2', 'Priority'));
    const waits = [w.wait('1'), w.wait('2')];
    await vi.waitFor(() => expect(heard).toEqual(['1 PENDING Priority', '2 PENDING Priority']), { timeout: 30_000 });
    s.states.set('1', pending('1', 'Resources'));
    await vi.waitFor(() => expect(heard.at(-1)).toBe('1 PENDING Resources'), { timeout: 30_000 });
    s.states.set('2', pending('2', 'QOSMaxJobsPerUserLimit'));
    await vi.waitFor(() => expect(heard.at(-1)).toBe('2 PENDING QOSMaxJobsPerUserLimit'), { timeout: 30_000 });
    s.states.set('1', done('1'));
    s.states.set('2', done('2'));
    await Promise.all(waits);
    // Each reason heard once (the same answer again says nothing), and every poll asked about both jobs at once.
    expect(heard).toEqual(['1 PENDING Priority', '2 PENDING Priority', '1 PENDING Resources', '2 PENDING QOSMaxJobsPerUserLimit', '1 COMPLETED', '2 COMPLETED']);
    expect(s.polls.every((p) => p.length === 2)).toBe(true);
    w.close();
  });
  it('never waits longer than its cap, even after a submission or a change (a cap below the first interval)', async () => {
    vi.useFakeTimers();
    try {
      const s = new ScriptedScheduler();
      s.states.set('1', running('1'));
      // The default first interval is 200 ms; DISAGG_POLL_MAX_SEC=0.05 asks for 50 ms at most.
      const w = new JobWatcher(s, { maxIntervalMs: 50 });
      expect(w.options.minIntervalMs).toBe(50);
      const wait = w.wait('1');
      await vi.advanceTimersByTimeAsync(50);
      expect(s.polls).toHaveLength(1);
      // A change starts the interval over: again at most 50 ms.
      s.states.set('1', { id: '1', state: 'COMPLETING', terminal: false });
      await vi.advanceTimersByTimeAsync(50);
      expect(s.polls).toHaveLength(2);
      s.states.set('1', done('1'));
      await vi.advanceTimersByTimeAsync(50);
      expect(s.polls).toHaveLength(3);
      expect((await wait).state).toBe('COMPLETED');
      w.close();
    } finally {
      vi.useRealTimers();
    }
  });
  it('polls at once when a job writes its end mark, then at the short interval until the scheduler reports the end', { timeout: 30_000 }, async () => {
    const s = new ScriptedScheduler();
    s.states.set('1', running('1'));
    // A first interval of 10 minutes: only the end mark can bring a poll within this test.
    const w = new JobWatcher(s, { minIntervalMs: 600_000, maxIntervalMs: 600_000, wakeIntervalMs: 1 });
    const dir = logFolder('mark');
    w.listenForEnd('1', dir);
    const wait = w.wait('1');
    expect(s.polls).toHaveLength(0);
    writeFileSync(path.join(dir, JOB_ENDED_FILE), '0\n');
    // The script has exited; the scheduler still says RUNNING (then COMPLETING): it is asked again and again.
    await vi.waitFor(() => expect(s.polls.length).toBeGreaterThanOrEqual(3), { timeout: 20_000 });
    s.states.set('1', done('1'));
    expect((await wait).state).toBe('COMPLETED');
    w.close();
  });

  it('hears a mark written before it began listening (a job that ended at once)', { timeout: 30_000 }, async () => {
    const s = new ScriptedScheduler();
    s.states.set('1', done('1'));
    const w = new JobWatcher(s, { minIntervalMs: 600_000, maxIntervalMs: 600_000 });
    const dir = logFolder('early');
    writeFileSync(path.join(dir, JOB_ENDED_FILE), '0\n');
    w.listenForEnd('1', dir);
    expect((await w.wait('1')).state).toBe('COMPLETED');
    expect(s.polls).toHaveLength(1);
    w.close();
  });

  it('a folder that cannot be watched leaves polling alone, said once', () => {
    const s = new ScriptedScheduler();
    const said: string[] = [];
    const w = new JobWatcher(s, { onMarkUnavailable: (why) => said.push(why) });
    w.listenForEnd('1', path.join(scratch, 'no-such-folder'));
    w.listenForEnd('2', path.join(scratch, 'no-such-folder-either'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/cannot watch .*no-such-folder: .*ENOENT/);
    expect(w.inFlight()).toEqual(['1', '2']);
    w.close();
  });
  it('a closed listener hears nothing more (checked against a listener still open, whose events come after)', { timeout: 30_000 }, async () => {
    const [a, b] = [logFolder('closed'), logFolder('open')];
    const heard: string[] = [];
    const closed = listenForEndMark(a, () => heard.push('a'));
    const open = listenForEndMark(b, () => heard.push('b'));
    closed.close();
    writeFileSync(path.join(a, JOB_ENDED_FILE), '0\n');
    writeFileSync(path.join(b, JOB_ENDED_FILE), '0\n');
    // One inotify queue for the process: an event of a's folder would have been delivered before b's.
    await vi.waitFor(() => expect(heard).toContain('b'), { timeout: 20_000 });
    expect(heard.every((h) => h === 'b')).toBe(true);
    open.close();
  });
  it('a job missing from the answers while another job\'s end mark brings short polls is still found vanished, once the misses span minMissSpanMs', { timeout: 30_000 }, async () => {
    const s = new ScriptedScheduler();
    s.states.set('1', running('1'));
    // '1' marks its end and the window of short polls outlasts the test; '2' is never reported.
    const w = new JobWatcher(s, { minIntervalMs: 600_000, maxIntervalMs: 600_000, maxMisses: 3, minMissSpanMs: 50, wakeIntervalMs: 1, wakeWindowMs: 600_000 });
    const dir = logFolder('other-marked');
    w.listenForEnd('1', dir);
    const forgotten = w.wait('2');
    writeFileSync(path.join(dir, JOB_ENDED_FILE), '0\n');
    expect(await forgotten).toMatchObject({ id: '2', state: 'UNKNOWN', terminal: true });
    expect(w.inFlight()).toEqual(['1']);
    w.close();
  });

  it('a job that cannot start stays watched, its end mark still heard, when its waiter waits again', { timeout: 30_000 }, async () => {
    const s = new ScriptedScheduler();
    s.states.set('7', { id: '7', state: 'PENDING', terminal: false, reason: 'ReqNodeNotAvail', cannotStart: 'ReqNodeNotAvail' });
    // Polls at once after the submission, then not for 10 minutes: only the end mark brings one later.
    const w = new JobWatcher(s, { minIntervalMs: 1, growth: 1e9, maxIntervalMs: 600_000, wakeIntervalMs: 1, wakeWindowMs: 1 });
    const dir = logFolder('cannot-start');
    w.listenForEnd('7', dir);
    expect(await w.wait('7')).toMatchObject({ cannotStart: 'ReqNodeNotAvail' });
    // The node came back: the job runs (the settling wait of the jobs layer asks again).
    s.states.set('7', running('7'));
    const again = w.wait('7');
    await vi.waitFor(() => expect(w.status('7')?.state).toBe('RUNNING'), { timeout: 20_000 });
    s.states.set('7', done('7'));
    writeFileSync(path.join(dir, JOB_ENDED_FILE), '0\n');
    expect((await again).state).toBe('COMPLETED');
    w.close();
  });

  it('the short polls after an end mark do not count a job the scheduler does not report yet as vanished', { timeout: 30_000 }, async () => {
    const s = new ScriptedScheduler();
    // Only the end mark brings polls here, every one of them short.
    const w = new JobWatcher(s, { minIntervalMs: 600_000, maxIntervalMs: 600_000, maxMisses: 3, wakeIntervalMs: 1, wakeWindowMs: 600_000 });
    const dir = logFolder('unreported');
    w.listenForEnd('1', dir);
    const wait = w.wait('1');
    writeFileSync(path.join(dir, JOB_ENDED_FILE), '0\n');
    // Twice maxMisses polls without '1' in the answer: counted, they would have made it UNKNOWN.
    await vi.waitFor(() => expect(s.polls.length).toBeGreaterThanOrEqual(6), { timeout: 20_000 });
    expect(w.inFlight()).toEqual(['1']);
    s.states.set('1', done('1'));
    expect((await wait).state).toBe('COMPLETED');
    w.close();
  });
});
