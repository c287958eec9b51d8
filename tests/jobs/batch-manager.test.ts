import { describe, expect, it } from 'vitest';
import { BatchManager } from '../../framework/jobs/batch-manager.ts';

/** Jobs that end when the test says so; records what was in flight at each submission. */
function harness() {
  const ends = new Map<string, () => void>();
  const ended = new Map<string, Promise<void>>();
  const inFlight = new Set<string>();
  const submittedOrder: string[] = [];
  let maxInFlight = 0;
  let n = 0;
  return {
    submitter: {
      submit: async (testId: string) => {
        if (testId.includes('bad')) throw new Error('sbatch: error: invalid partition specified: nope');
        const job = `J${++n}`;
        submittedOrder.push(testId);
        inFlight.add(job);
        maxInFlight = Math.max(maxInFlight, inFlight.size);
        ended.set(job, new Promise<void>((resolve) => ends.set(job, () => { inFlight.delete(job); resolve(); })));
        return job;
      },
      ended: (job: string) => ended.get(job)!,
    },
    finish: (job: string) => ends.get(job)!(),
    inFlight,
    submittedOrder,
    get maxInFlight() { return maxInFlight; },
  };
}

// Everything the batch manager does in reaction to a job's end happens in promise callbacks (no
// timers, no I/O): one macrotask later, all of it has happened, however loaded the machine is.
const tick = () => new Promise((r) => setImmediate(r));

describe('BatchManager', () => {
  it('submits batch k+1 only when every job of batch k ended, never more than the batch size in flight', async () => {
    const h = harness();
    const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
    const lines: string[] = [];
    const bm = new BatchManager(ids, h.submitter, { batchSize: 5, log: (l) => lines.push(l) });
    expect(bm.batches.map((b) => b.length)).toEqual([5, 5, 2]);
    // Every test asks at once, as concurrent tests do.
    const jobs = ids.map((id) => bm.jobFor(id));
    await tick();
    expect(h.submittedOrder).toEqual(['t0', 't1', 't2', 't3', 't4']);
    for (let j = 1; j <= 4; j++) h.finish(`J${j}`);
    await tick();
    expect(h.submittedOrder).toHaveLength(5);
    h.finish('J5');
    await tick();
    expect(h.submittedOrder).toHaveLength(10);
    for (let j = 6; j <= 10; j++) h.finish(`J${j}`);
    expect(await Promise.all(jobs)).toEqual(ids.map((_, i) => `J${i + 1}`));
    expect(h.maxInFlight).toBe(5);
    expect(lines.join('\n')).toMatch(/Total batches: 3/);
    expect(lines.join('\n')).toMatch(/Submitting Batch 2\nRange: \[10:12\] \(2 jobs\)/);
  });

  it('batch size 0 submits everything at once', async () => {
    const h = harness();
    const bm = new BatchManager(['a', 'b', 'c'], h.submitter, { batchSize: 0 });
    expect(bm.batches).toEqual([['a', 'b', 'c']]);
    await bm.jobFor('c');
    expect(h.submittedOrder).toEqual(['a', 'b', 'c']);
  });

  it('a submission failure fails only its own test and does not hold the next batch', async () => {
    const h = harness();
    const bm = new BatchManager(['a', 'bad', 'c'], h.submitter, { batchSize: 2 });
    await expect(bm.jobFor('bad')).rejects.toThrow(/invalid partition/);
    const c = bm.jobFor('c');
    h.finish('J1');
    expect(await c).toBe('J2');
  });

  it('after a batch ended, nextBatchOut waits for every submission of the next batch; before, and for the last batch, it does not wait', async () => {
    const h = harness();
    // The next batch's sbatch calls return when the test releases them.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const submitter = { ...h.submitter, submit: async (testId: string, batch: number) => {
      if (batch > 0) await gate;
      return h.submitter.submit(testId);
    } };
    const bm = new BatchManager(['a', 'b', 'c', 'd'], submitter, { batchSize: 2 });
    for (const id of ['a', 'b', 'c', 'd']) void bm.jobFor(id);
    await tick();
    let out = false;
    // Batch 0 still runs (b has not ended): nothing to wait for.
    h.finish('J1');
    await bm.nextBatchOut(0);
    h.finish('J2');
    const waiting = bm.nextBatchOut(0).then(() => (out = true));
    await tick();
    await tick();
    expect(out).toBe(false);
    release();
    await waiting;
    expect(h.submittedOrder).toEqual(['a', 'b', 'c', 'd']);
    await bm.nextBatchOut(1); // no batch after the last
  });

  it('rejects a test that is not part of the run', () => {
    const bm = new BatchManager(['a'], harness().submitter, { batchSize: 5 });
    expect(() => bm.jobFor('zzz')).toThrow(/not part of this run/);
  });
  it('a batch\'s submissions are under way together, at most concurrentSubmissions at once, and logged in the batch\'s order whatever order they return in', async () => {
    const h = harness();
    const releases = new Map<string, () => void>();
    let underWay = 0;
    let mostUnderWay = 0;
    const submitter = { ...h.submitter, submit: async (testId: string) => {
      underWay += 1;
      mostUnderWay = Math.max(mostUnderWay, underWay);
      await new Promise<void>((resolve) => releases.set(testId, resolve));
      underWay -= 1;
      return h.submitter.submit(testId);
    } };
    const lines: string[] = [];
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const bm = new BatchManager(ids, submitter, { batchSize: 5, concurrentSubmissions: 3, log: (l) => lines.push(l) });
    const jobs = ids.map((id) => bm.jobFor(id));
    await tick();
    expect([...releases.keys()]).toEqual(['a', 'b', 'c']);
    // They return last first: each one that returns lets the next of the batch go.
    releases.get('c')!();
    await tick();
    expect([...releases.keys()]).toEqual(['a', 'b', 'c', 'd']);
    for (const id of ['d', 'b', 'a']) releases.get(id)!();
    await tick();
    releases.get('e')!();
    const jobIds = await Promise.all(jobs);
    expect(mostUnderWay).toBe(3);
    // Each test got its own job, whatever order sbatch returned in (c first: J1).
    expect(Object.fromEntries(ids.map((id, i) => [id, jobIds[i]]))).toEqual({ c: 'J1', d: 'J2', b: 'J3', a: 'J4', e: 'J5' });
    await bm.nextBatchOut(0);
    const order = lines.filter((l) => /Job J\d <- /.test(l)).map((l) => l.trim());
    expect(order).toEqual(['[  1/5] Job J4 <- a', '[  2/5] Job J3 <- b', '[  3/5] Job J1 <- c', '[  4/5] Job J2 <- d', '[  5/5] Job J5 <- e']);
  });
});
