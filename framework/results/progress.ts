// Live progress while a run waits on its jobs. The run session feeds a ProgressBoard with events
// (waiting, submitted, queued, running, parsing, ended); the board shows them in the words of the
// one vocabulary of a test's states (test-states.ts):
// - on a terminal, a frame redrawn in place every `redrawMs` (summary line + the most relevant
//   tests, bounded to the terminal's height);
// - otherwise (CI logs), one plain line per state change (waiting excepted: that is the plan), a
//   summary line at start(), every `summaryEverySec` and at stop().
// The text comes from progress-format.ts; this file owns the clock, the timer and the stream.
//
// Expected wiring (framework/jobs/session.ts):
//   const board = new ProgressBoard();               // stderr; start() when the plan is known
//   plan():      board.waiting(id, batchOf(id)) for every test; board.start()
//   submitted:   board.submitted(id, jobId)
//   watcher onChange(status): board.jobStatus(id, status)   // queued(reason) / running(nodes) / parsing
//   run() ends:  board.ended(id, passed ? 'passed' : 'failed', failures[0]);  skips: board.ended(id, 'skipped', reason)
//   close():     board.stop()
//   other log lines while the board is live: board.log(line) (keeps the frame intact on a terminal)
import type { JobStatus } from '../scheduler/scheduler.ts';
import { formatChangeLine, formatSummaryLine, renderFrame, summarize, type TestPhase, type TestProgress } from './progress-format.ts';
import type { EndState } from './test-states.ts';

/** What the board writes to: a process stream, or anything with write (tests). */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  rows?: number;
  columns?: number;
}

export interface ProgressBoardOptions {
  /** Default process.stderr (stdout stays the test runner's). */
  stream?: ProgressStream;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  /** 'live' redraws in place, 'plain' prints lines; default 'live' when the stream is a TTY. */
  mode?: 'live' | 'plain';
  /** Live mode: redraw interval; default 1000 ms. */
  redrawMs?: number;
  /** Plain mode: a summary line every so many seconds; default 30. */
  summaryEverySec?: number;
  /** Terminal size when the stream does not say; default 24 x 80. */
  size?: { rows: number; columns: number };
}

// ANSI: cursor up to the start of line N above (CSI n F), erase to the end of the screen (CSI J).
const eraseLinesAbove = (n: number) => `\x1b[${n}F\x1b[J`;

export class ProgressBoard {
  readonly mode: 'live' | 'plain';
  private readonly tests = new Map<string, TestProgress>();
  private readonly stream: ProgressStream;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly redrawMs: number;
  private readonly summaryEveryMs: number;
  private readonly fallbackSize: { rows: number; columns: number };
  private timer: NodeJS.Timeout | undefined;
  private drawnLines = 0;
  private lastSummary: number;
  private stopped = false;

  constructor(options: ProgressBoardOptions = {}) {
    this.stream = options.stream ?? process.stderr;
    this.now = options.now ?? Date.now;
    this.mode = options.mode ?? (this.stream.isTTY ? 'live' : 'plain');
    this.redrawMs = options.redrawMs ?? 1000;
    this.summaryEveryMs = (options.summaryEverySec ?? 30) * 1000;
    this.startedAt = this.now();
    this.lastSummary = this.startedAt;
    this.fallbackSize = options.size ?? { rows: 24, columns: 80 };
  }

  /** Planned: waits for its batch. */
  waiting(testId: string, batch?: number): void {
    this.set(testId, { phase: 'waiting', batch });
  }

  /** Its job is submitted: queued in the scheduler's queue until the scheduler says otherwise. */
  submitted(testId: string, jobId: string): void {
    this.set(testId, { phase: 'queued', jobId, reason: undefined });
  }

  /** In the scheduler's queue (SLURM's PENDING), with the scheduler's reason. */
  queued(testId: string, reason?: string): void {
    this.set(testId, { phase: 'queued', reason });
  }

  /** `since`: when the job started (epoch ms, the scheduler's start time); default now. */
  running(testId: string, details: { nodes?: string[]; since?: number } = {}): void {
    this.set(testId, { phase: 'running', nodes: details.nodes, reason: undefined }, details.since);
  }

  /** The job ended; its logs are being read and judged. */
  parsing(testId: string): void {
    this.set(testId, { phase: 'parsing', reason: undefined });
  }

  /** `detail`: why it failed, was skipped or not run (the first line is shown). */
  ended(testId: string, verdict: EndState, detail?: string): void {
    this.set(testId, { phase: verdict, reason: detail?.split('\n')[0] });
  }

  /** A scheduler status from the job watcher: queued (with reason), running (nodes, start), or ended. */
  jobStatus(testId: string, status: JobStatus): void {
    if (status.terminal) this.parsing(testId);
    else if (status.state === 'RUNNING' || status.state === 'COMPLETING') this.running(testId, { nodes: status.nodes, since: status.startTime });
    else this.queued(testId, status.cannotStart ?? status.reason ?? (status.state === 'PENDING' ? undefined : status.state));
  }

  /** Prints a line of other output without breaking the live frame. */
  log(line: string): void {
    this.erase();
    this.stream.write(`${line}\n`);
    if (this.mode === 'live' && !this.stopped) this.draw();
  }

  /** Starts the periodic refresh (the timer does not keep the process alive); call after queueing the plan. */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.mode === 'live' ? this.redrawMs : Math.min(this.summaryEveryMs, 5000));
    this.timer.unref();
    if (this.mode === 'live') this.draw();
    else this.printSummary();
  }

  /** One refresh: redraws the frame (live) or prints the summary when one is due (plain). */
  tick(): void {
    if (this.stopped) return;
    if (this.mode === 'live') this.draw();
    else if (this.now() - this.lastSummary >= this.summaryEveryMs) this.printSummary();
  }

  /** Stops the timer and leaves the final state on screen (live) or a final summary line (plain). */
  stop(): void {
    if (this.stopped) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.mode === 'live') this.draw();
    else this.printSummary();
    this.stopped = true;
  }

  /** A copy of one test's state (tests and callers that want to look). */
  state(testId: string): TestProgress | undefined {
    const t = this.tests.get(testId);
    return t && { ...t };
  }

  private set(testId: string, change: Partial<TestProgress> & { phase: TestPhase }, since?: number): void {
    const now = this.now();
    const previous = this.tests.get(testId);
    const next: TestProgress = { testId, ...previous, ...change, since: since ?? now, changed: now };
    // Same phase again (a repeated poll answer): keep the original start, print nothing new.
    if (previous && previous.phase === next.phase && since === undefined) next.since = previous.since;
    const unchanged = previous && previous.phase === next.phase && previous.reason === next.reason && previous.jobId === next.jobId && String(previous.nodes) === String(next.nodes);
    this.tests.set(testId, next);
    if (this.stopped || unchanged) return;
    // Waiting is the plan, not news: CI logs get it in the summary that start() prints.
    if (this.mode === 'plain' && next.phase !== 'waiting') this.stream.write(`${formatChangeLine(next, now, this.startedAt)}\n`);
  }

  private printSummary(): void {
    this.lastSummary = this.now();
    this.stream.write(`${formatSummaryLine(summarize(this.tests.values(), this.now(), this.startedAt))}\n`);
  }

  private size(): { rows: number; columns: number } {
    return { rows: this.stream.rows ?? this.fallbackSize.rows, columns: this.stream.columns ?? this.fallbackSize.columns };
  }

  private erase(): void {
    if (this.mode !== 'live' || this.drawnLines === 0) return;
    this.stream.write(eraseLinesAbove(this.drawnLines));
    this.drawnLines = 0;
  }

  private draw(): void {
    const lines = renderFrame([...this.tests.values()], this.now(), this.startedAt, { ...this.size(), colour: true });
    // One write per frame, so the terminal never shows half of one.
    this.stream.write((this.drawnLines ? eraseLinesAbove(this.drawnLines) : '') + lines.map((l) => `${l}\n`).join(''));
    this.drawnLines = lines.length;
  }
}
