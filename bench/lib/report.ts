// What every benchmark prints and keeps: a short table on stdout, and one JSON line (the machine,
// the date, the figures) appended to bench/results/<name>.jsonl, so results accumulate in the repo.
import { appendFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { smoke } from './smoke.ts';

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const resultsDir = path.join(benchDir, 'results');

// Taken when the benchmark starts, before its own work loads the machine.
const loadAtStart = os.loadavg()[0];

export interface Machine {
  host: string;
  nproc: number;
  cpuModel: string;
  memGiB: number;
  node: string;
  kernel: string;
  /** 1-minute load average when the benchmark started: other work on the machine skews timings. */
  load1AtStart: number;
}

export function machine(): Machine {
  return {
    host: os.hostname(),
    nproc: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    kernel: os.release(),
    load1AtStart: Number(loadAtStart.toFixed(2)),
  };
}

/** This benchmark's command line, as it was typed from the repository's root. */
export function commandLine(): string {
  return `node --import tsx ${path.relative(path.dirname(benchDir), process.argv[1] ?? '')} ${process.argv.slice(2).join(' ')}`.trim();
}

/** The load averages now (1, 5, 15 minutes), for a log's first and last lines. */
export function loadNow(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** A log's first lines: the date, the machine, the command and the load, so the figures below can be judged later. */
export function printRunHeader(): void {
  const m = machine();
  console.log(`date: ${new Date().toISOString()}`);
  console.log(`machine: ${m.host}, ${m.nproc} CPUs (${m.cpuModel}), ${m.memGiB} GiB, Node ${m.node}, kernel ${m.kernel}`);
  console.log(`command: ${commandLine()}`);
  console.log(`load average at start: ${loadNow()}`);
}

/** A fixed-width table: the first column left-aligned, the others right-aligned. */
export function printTable(title: string, header: string[], rows: Array<Array<string | number>>): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => cells.reduce((w, r) => Math.max(w, (r[c] ?? '').length), 0));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

export interface Goal {
  what: string;
  value: number;
  /** The bound, and on which side the value must be. */
  limit: number;
  atMost: boolean;
  unit?: string;
}

export function goalMet(goal: Goal): boolean {
  return goal.atMost ? goal.value <= goal.limit : goal.value >= goal.limit;
}

/** `goal: <what> <= 1.10: 1.04 PASS` lines; returns true when every goal is met. */
export function printGoals(goals: Goal[]): boolean {
  for (const g of goals) {
    const unit = g.unit ?? '';
    console.log(`goal: ${g.what} ${g.atMost ? '<=' : '>='} ${g.limit}${unit}: ${g.value}${unit} ${goalMet(g) ? 'PASS' : 'MISS'}`);
  }
  return goals.every(goalMet);
}

/**
 * Appends `{ bench, date, machine, command, ...figures, goals }` to bench/results/<name>.jsonl and
 * returns the file's path.
 */
export function appendResult(name: string, figures: Record<string, unknown>, goals: Goal[] = []): string {
  if (smoke) {
    console.log(`smoke: bench/${name} runs (--smoke: tiny sizes, no figure kept)`);
    return '(--smoke: nothing kept)';
  }
  const line = {
    bench: name,
    date: new Date().toISOString(),
    machine: machine(),
    command: commandLine(),
    ...figures,
    goals: goals.map((g) => ({ ...g, met: goalMet(g) })),
  };
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.jsonl`);
  // Milliseconds are plenty: 4 decimals keep the lines short.
  appendFileSync(file, JSON.stringify(line, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toFixed(4)) : v)) + '\n');
  console.log(`appended to ${path.relative(process.cwd(), file)}`);
  return file;
}

