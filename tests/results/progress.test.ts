import { describe, expect, it } from 'vitest';
import {
  fitWidth,
  formatSummaryLine,
  formatTestLine,
  renderFrame,
  selectRows,
  summarize,
  type TestProgress,
} from '../../framework/results/progress-format.ts';
import { ProgressBoard, type ProgressStream } from '../../framework/results/progress.ts';

const T0 = Date.parse('2025-11-03T09:00:00Z');
const at = (sec: number) => T0 + sec * 1000;
const test = (testId: string, phase: TestProgress['phase'], extra: Partial<TestProgress> = {}): TestProgress => ({
  testId,
  phase,
  since: T0,
  changed: T0,
  ...extra,
});

describe('progress lines', () => {
  it('says where each test stands', () => {
    const now = at(192);
    expect(formatTestLine(test('a', 'waiting', { batch: 2 }), now)).toBe('WAITING  a  batch 2');
    expect(formatTestLine(test('a', 'queued', { jobId: '17', reason: 'Resources', since: at(71) }), now)).toBe('QUEUED   a  job 17 (Resources), queue 2m 01s');
    expect(formatTestLine(test('a', 'running', { jobId: '17', nodes: ['gb-01', 'gb-02'] }), now)).toBe('RUNNING  a  job 17 on gb-01,gb-02, run 3m 12s');
    expect(formatTestLine(test('a', 'parsing', { jobId: '17' }), now)).toBe('PARSING  a  job 17 ended, reading its logs');
    expect(formatTestLine(test('a', 'passed', { jobId: '17' }), now)).toBe('PASSED   a  job 17');
    expect(formatTestLine(test('a', 'failed', { jobId: '17', reason: 'concurrency 64: no result' }), now)).toBe('FAILED   a  job 17: concurrency 64: no result');
    expect(formatTestLine(test('a', 'skipped', { reason: 'not for GB300' }), now)).toBe('SKIPPED  a  not for GB300');
    // the words of the one vocabulary (test-states.ts): a test that did not reach its end is NOT RUN
    expect(formatTestLine(test('a', 'not run', { jobId: '17', reason: 'the run was interrupted (SIGINT)' }), now)).toBe('NOT RUN  a  job 17: the run was interrupted (SIGINT)');
  });

  it('sums up jobs and tests in one line', () => {
    const tests = [
      test('q', 'waiting', { batch: 2 }),
      test('s', 'queued', { jobId: '1' }),
      test('p', 'queued', { jobId: '2' }),
      test('r', 'running', { jobId: '3' }),
      test('x', 'parsing', { jobId: '4' }),
      test('ok', 'passed', { jobId: '5' }),
      test('ko', 'failed', { jobId: '6' }),
      test('sk', 'skipped'),
    ];
    const summary = summarize(tests, at(725), T0);
    expect(summary).toMatchObject({ tests: 8, waiting: 1, queued: 2, running: 1, parsing: 1, passed: 1, failed: 1, skipped: 1, jobsSubmitted: 6, jobsDone: 3 });
    // The tests' counts add up to their total.
    const counted = [...formatSummaryLine(summary).split('| tests ')[1].matchAll(/(\d+) [a-z]/g)].reduce((a, m) => a + Number(m[1]), 0);
    expect(counted).toBe(summary.tests);
    expect(formatSummaryLine(summary)).toBe(
      '[12m 05s] jobs 6 submitted, 2 queued, 1 running, 3 done | tests 8: 1 passed, 1 failed, 1 skipped, 1 parsing, 2 queued, 1 running, 1 waiting',
    );
  });

  it('shows the most relevant tests first and counts the ones that do not fit', () => {
    const tests = [
      test('done-early', 'passed', { changed: at(10) }),
      test('queued-3', 'waiting', { batch: 3 }),
      test('run-late', 'running', { since: at(50) }),
      test('failed', 'failed', { changed: at(40) }),
      test('queued-2', 'waiting', { batch: 2 }),
      test('run-early', 'running', { since: at(5) }),
      test('done-late', 'passed', { changed: at(60) }),
      test('waiting', 'queued'),
    ];
    expect(selectRows(tests, 20).shown.map((t) => t.testId)).toEqual([
      'run-early', 'run-late', 'failed', 'waiting', 'queued-2', 'queued-3', 'done-late', 'done-early',
    ]);
    const { shown, more } = selectRows(tests, 4);
    expect(shown.map((t) => t.testId)).toEqual(['run-early', 'run-late', 'failed']);
    expect(more).toBe('... 5 more (1 queued, 2 waiting, 2 passed)');
  });

  it('bounds a frame to the terminal: one line free, no line wider than the screen', () => {
    const tests = Array.from({ length: 50 }, (_, k) => test(`disagg_perf_a-very-long-config-name-number-${k}`, 'running', { jobId: String(k), since: at(k) }));
    const frame = renderFrame(tests, at(100), T0, { rows: 10, columns: 40 });
    expect(frame).toHaveLength(9);
    expect(frame.every((l) => l.length <= 39)).toBe(true);
    expect(frame[0]).toMatch(/^\[1m 40s\] jobs 50 submitted/);
    expect(frame[8]).toBe(fitWidth('... 43 more (43 running)', 40));
    expect(fitWidth('x'.repeat(50), 40)).toBe(`${'x'.repeat(38)}…`);
    const coloured = renderFrame(tests.slice(0, 1), at(100), T0, { rows: 10, columns: 200, colour: true });
    expect(coloured[1]).toMatch(/^\x1b\[36mRUNNING\x1b\[0m +disagg_perf/);
  });
});

/** A stream that keeps what is written, as a terminal or as a CI log. */
function stream(tty: boolean, size = { rows: 8, columns: 100 }): ProgressStream & { text: string[] } {
  const text: string[] = [];
  return { text, write: (chunk: string) => text.push(chunk), isTTY: tty, ...(tty ? size : {}) };
}

describe('ProgressBoard in a CI log (not a TTY)', () => {
  it('prints a summary at the start, one line per state change, a summary every 30 s and at the end', () => {
    let now = T0;
    const out = stream(false);
    const board = new ProgressBoard({ stream: out, now: () => now });
    expect(board.mode).toBe('plain');
    board.waiting('a', 1);
    board.waiting('b', 2);
    board.start(); // the plan's summary
    now = at(5);
    board.submitted('a', '4711');
    board.jobStatus('a', { id: '4711', state: 'PENDING', terminal: false, reason: 'Priority' });
    board.jobStatus('a', { id: '4711', state: 'PENDING', terminal: false, reason: 'Priority' }); // same answer: no line
    now = at(20);
    board.tick(); // 20 s after the last summary: none yet
    board.jobStatus('a', { id: '4711', state: 'RUNNING', terminal: false, nodes: ['gb-07'], startTime: at(18) });
    now = at(31);
    board.tick();
    board.jobStatus('a', { id: '4711', state: 'COMPLETED', terminal: true });
    board.ended('a', 'failed', 'concurrency 64: no result\n(and more lines)');
    board.stop();
    board.ended('a', 'passed'); // after stop: nothing printed
    expect(out.text.join('')).toBe(
      [
        '[0s] jobs 0 submitted, 0 queued, 0 running, 0 done | tests 2: 0 passed, 0 failed, 2 waiting',
        '[5s] QUEUED   a  job 4711, queue 0s',
        '[5s] QUEUED   a  job 4711 (Priority), queue 0s',
        '[20s] RUNNING  a  job 4711 on gb-07, run 2s',
        '[31s] jobs 1 submitted, 0 queued, 1 running, 0 done | tests 2: 0 passed, 0 failed, 1 running, 1 waiting',
        '[31s] PARSING  a  job 4711 ended, reading its logs',
        '[31s] FAILED   a  job 4711: concurrency 64: no result',
        '[31s] jobs 1 submitted, 0 queued, 0 running, 1 done | tests 2: 0 passed, 1 failed, 1 waiting',
        '',
      ].join('\n'),
    );
  });

  it('shows why a pending job can never start', () => {
    const out = stream(false);
    const board = new ProgressBoard({ stream: out, now: () => T0 });
    board.jobStatus('a', { id: '9', state: 'PENDING', terminal: false, reason: 'PartitionConfig', cannotStart: 'partition gpu-x does not exist' });
    expect(board.state('a')).toMatchObject({ phase: 'queued', reason: 'partition gpu-x does not exist' });
  });
});

describe('ProgressBoard on a terminal', () => {
  it('redraws its frame in place, bounded to the terminal height, and keeps it under other output', () => {
    let now = T0;
    const out = stream(true, { rows: 5, columns: 80 });
    const board = new ProgressBoard({ stream: out, now: () => now });
    expect(board.mode).toBe('live');
    for (let k = 0; k < 6; k++) board.waiting(`t${k}`, 1);
    expect(out.text).toEqual([]); // nothing printed per event on a terminal
    board.tick();
    const first = out.text[0].split('\n');
    expect(first).toHaveLength(5); // 4 lines (5 rows, one kept free) + the final newline
    expect(first[3]).toBe('... 4 more (4 waiting)');
    now = at(3);
    board.submitted('t0', '101');
    board.tick();
    // Up 4 lines to the frame's start, erase below, then the new frame in the same write.
    expect(out.text[1].startsWith('\x1b[4F\x1b[J[3s] jobs 1 submitted, 1 queued')).toBe(true);
    board.log('sbatch: retrying after a transient error');
    expect(out.text.slice(2, 5)).toEqual(['\x1b[4F\x1b[J', 'sbatch: retrying after a transient error\n', expect.stringMatching(/^\[3s\] jobs 1 submitted/)]);
    board.stop();
    expect(out.text.at(-1)!.startsWith('\x1b[4F\x1b[J')).toBe(true);
    const written = out.text.length;
    board.tick();
    expect(out.text).toHaveLength(written); // stopped: no more frames
  });
});
