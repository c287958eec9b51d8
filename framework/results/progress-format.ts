// The text of the live progress display, as pure functions of the tests' states and the time:
// one line per test, the summary line, which rows fit a terminal, the plain lines for CI logs.
// progress.ts owns the clock, the timer and the stream.
import { formatDuration } from './test-timing.ts';
import { STATE_WORDS, TIME_WORDS, type TestState } from './test-states.ts';

/** A test's state as the board shows it: the one vocabulary of test-states.ts. */
export type TestPhase = TestState;

export interface TestProgress {
  testId: string;
  phase: TestPhase;
  batch?: number;
  jobId?: string;
  /** Queued: the scheduler's reason. Failed/skipped/not run: the first line of why. */
  reason?: string;
  nodes?: string[];
  /** Epoch ms the test entered this phase (running: when the job started, if the scheduler says). */
  since: number;
  /** Epoch ms of the last change, to show recent endings first. */
  changed: number;
}

export interface ProgressSummary {
  tests: number;
  waiting: number;
  queued: number;
  running: number;
  parsing: number;
  passed: number;
  failed: number;
  skipped: number;
  'not run': number;
  /** Tests that got a job id (at most one job per test). */
  jobsSubmitted: number;
  /** Jobs that ended: parsing or judged after a job. */
  jobsDone: number;
  elapsedSec: number;
}

const PHASE_WORD = Object.fromEntries(Object.entries(STATE_WORDS).map(([state, w]) => [state, w.word])) as Record<TestPhase, string>;
const WORD_WIDTH = Object.values(PHASE_WORD).reduce((width, w) => Math.max(width, w.length), 0);
const ENDED = new Set<TestPhase>(['passed', 'failed', 'skipped', 'not run']);

/** Where the test stands, after its id, its time so far named as everywhere (TIME_WORDS): 'job 48213 on gb-01,gb-02, run 3m 12s'. */
function stateText(t: TestProgress, now: number): string {
  const job = t.jobId ? `job ${t.jobId}` : '';
  const since = formatDuration(Math.max(0, now - t.since) / 1000);
  switch (t.phase) {
    case 'waiting':
      return t.batch !== undefined ? `batch ${t.batch}` : '';
    case 'queued':
      return `${job}${t.reason ? ` (${t.reason})` : ''}, ${TIME_WORDS.queue.word} ${since}`;
    case 'running':
      return `${job}${t.nodes?.length ? ` on ${t.nodes.join(',')}` : ''}, ${TIME_WORDS.run.word} ${since}`;
    case 'parsing':
      return `${job} ended, reading its logs`;
    case 'passed':
      return job;
    case 'failed':
    case 'skipped':
    case 'not run':
      return [job, t.reason].filter(Boolean).join(': ');
  }
}

/** 'RUNNING  disagg_perf_x  job 48213 on gb-01, run 3m 12s' (no colour, no width limit). */
export function formatTestLine(t: TestProgress, now: number): string {
  const state = stateText(t, now);
  return `${PHASE_WORD[t.phase].padEnd(WORD_WIDTH)}  ${t.testId}${state ? `  ${state}` : ''}`;
}

export function summarize(tests: Iterable<TestProgress>, now: number, startedAt: number): ProgressSummary {
  const s: ProgressSummary = {
    tests: 0, waiting: 0, queued: 0, running: 0, parsing: 0, passed: 0, failed: 0, skipped: 0, 'not run': 0,
    jobsSubmitted: 0, jobsDone: 0, elapsedSec: Math.max(0, now - startedAt) / 1000,
  };
  for (const t of tests) {
    s.tests++;
    if (t.jobId) s.jobsSubmitted++;
    if (t.jobId && (t.phase === 'parsing' || ENDED.has(t.phase))) s.jobsDone++;
    s[t.phase]++;
  }
  return s;
}

/** '[12m 05s]': the time since the run started, leading every plain line. */
export function formatElapsed(elapsedSec: number): string {
  return `[${formatDuration(elapsedSec)}]`;
}

/** A plain line for a state change (CI logs): '[3m 10s] QUEUED   disagg_perf_x  job 12 (Priority), queue 0s'. */
export function formatChangeLine(t: TestProgress, now: number, startedAt: number): string {
  return `${formatElapsed(Math.max(0, now - startedAt) / 1000)} ${formatTestLine(t, now)}`;
}

/**
 * '[12m 05s] jobs 8 submitted, 3 queued, 4 running, 1 done | tests 12: 2 passed, 1 failed, 3 queued, 4 running, 2 waiting':
 * the tests' counts add up to their total (a test whose job is queued or running is counted there).
 */
export function formatSummaryLine(s: ProgressSummary): string {
  const tests = [
    `${s.passed} passed`,
    `${s.failed} failed`,
    s.skipped ? `${s.skipped} skipped` : '',
    s['not run'] ? `${s['not run']} not run` : '',
    s.parsing ? `${s.parsing} parsing` : '',
    s.queued ? `${s.queued} queued` : '',
    s.running ? `${s.running} running` : '',
    `${s.waiting} waiting`,
  ].filter(Boolean);
  return (
    `${formatElapsed(s.elapsedSec)} jobs ${s.jobsSubmitted} submitted, ${s.queued} queued, ${s.running} running, ` +
    `${s.jobsDone} done | tests ${s.tests}: ${tests.join(', ')}`
  );
}

// What deserves a terminal row first: work in flight (longest first), then fresh failures, then
// what waits, then the rest.
const PHASE_RANK: Record<TestPhase, number> = { running: 0, parsing: 1, failed: 2, 'not run': 3, queued: 4, waiting: 5, passed: 6, skipped: 7 };

function relevance(a: TestProgress, b: TestProgress): number {
  const byPhase = PHASE_RANK[a.phase] - PHASE_RANK[b.phase];
  if (byPhase) return byPhase;
  if (ENDED.has(a.phase)) return b.changed - a.changed; // most recent ending first
  if (a.phase === 'waiting') return (a.batch ?? 0) - (b.batch ?? 0);
  return a.since - b.since; // longest running / waiting first
}

/** The most relevant tests that fit in `rows` lines, and a line for the rest when some do not fit. */
export function selectRows(tests: TestProgress[], rows: number): { shown: TestProgress[]; more?: string } {
  const sorted = [...tests].sort(relevance);
  if (sorted.length <= rows) return { shown: sorted };
  const shown = sorted.slice(0, Math.max(0, rows - 1));
  const rest = sorted.slice(shown.length);
  const counts = new Map<TestPhase, number>();
  for (const t of rest) counts.set(t.phase, (counts.get(t.phase) ?? 0) + 1);
  const parts = [...counts].map(([phase, n]) => `${n} ${phase}`);
  return { shown, more: `... ${rest.length} more (${parts.join(', ')})` };
}

/** Cuts a line to the terminal's width, so no line wraps and the redraw's line count stays true. */
export function fitWidth(line: string, columns: number): string {
  const max = Math.max(10, columns - 1);
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

export interface FrameOptions {
  rows: number;
  columns: number;
  /** ANSI colours on the phase words. */
  colour?: boolean;
}

/** The whole terminal frame: the summary line first, then as many test rows as fit. */
export function renderFrame(tests: TestProgress[], now: number, startedAt: number, options: FrameOptions): string[] {
  // Keep one terminal line free so the frame never scrolls the screen by itself.
  const room = Math.max(2, options.rows - 1);
  const { shown, more } = selectRows(tests, room - 1);
  const rows = shown.map((t) => {
    const line = fitWidth(formatTestLine(t, now), options.columns);
    return options.colour ? colourPhase(line, t.phase) : line;
  });
  const lines = [fitWidth(formatSummaryLine(summarize(tests, now, startedAt)), options.columns), ...rows];
  if (more) lines.push(fitWidth(more, options.columns));
  return lines;
}

const PHASE_COLOUR: Partial<Record<TestPhase, string>> = { running: '36', queued: '33', passed: '32', failed: '31', parsing: '35', 'not run': '31' };

/** Colours the phase word at the start of a test line (ANSI SGR), for terminals. */
export function colourPhase(line: string, phase: TestPhase): string {
  const colour = PHASE_COLOUR[phase];
  const word = PHASE_WORD[phase];
  return colour && line.startsWith(word) ? `\x1b[${colour}m${word}\x1b[0m${line.slice(word.length)}` : line;
}
