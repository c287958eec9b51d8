// Hostile config files within the size bound: each shape of bench/hostile-shapes.ts, filled to
// MAX_CONFIG_BYTES, loaded and validated as the run does it (bench/lib/validate-one.ts, a process
// of its own per file). Goal: every one validated or refused in at most 5 CPU seconds and 300 MB of
// peak memory (the process's, Node's own ~85 MB included). CPU seconds, not wall: on the shared
// 2-core machine the wall time is mostly other work's (the load is in the JSON line and the table).
// The baseline in the same run: the first disagg example config, loaded the same way. A file four
// times the bound is refused unread. Then each matrix shape of bench/hostile-matrix-shapes.ts, filled
// to the matrix bound (READ_LIMITS.matrix), named by a CT perftest config whose validation reads it,
// with the same goals.
// Command line: USAGE below (--help prints it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { packageRoot } from '../framework/settings.ts';
import { MAX_CONFIG_BYTES } from '../framework/config/load.ts';
import { appendResult, printGoals, printTable, type Goal } from './lib/report.ts';
import { timedCommand } from './lib/timed-command.ts';
import { shapes } from './hostile-shapes.ts';
import { matrixShapes } from './hostile-matrix-shapes.ts';
import { READ_LIMITS } from '../runners/common/read-file.ts';
import { maxOf } from '../runners/common/stats.ts';
import { benchArgs } from './lib/smoke.ts';
import { benchOptions } from './lib/options.ts';

const USAGE = `usage: node --import tsx bench/hostile-input.ts [--runs 1] [--shapes NAME,...] [--bound-bytes N] [--matrix-bytes N] [--smoke]
  --runs per file; --shapes: only these shapes (config or matrix); --bound-bytes, --matrix-bytes:
  fill them to N bytes instead of the bounds (the goals are the bounds'). --smoke: two shapes of each
  at 16 KiB, to show the script still runs; no figure kept.`;

const cli = benchOptions({
  args: benchArgs(['--shapes', [...Object.keys(shapes).slice(0, 2), ...Object.keys(matrixShapes).slice(0, 2)].join(','), '--bound-bytes', String(16 * 1024), '--matrix-bytes', String(16 * 1024)]),
  options: { runs: { type: 'string', default: '1' }, shapes: { type: 'string' }, 'bound-bytes': { type: 'string' }, 'matrix-bytes': { type: 'string' } },
}, USAGE);
const { values } = cli;
const runs = cli.wholeNumber('runs');
const boundBytes = values['bound-bytes'] === undefined ? MAX_CONFIG_BYTES : cli.wholeNumber('bound-bytes', { min: 1, max: MAX_CONFIG_BYTES });
const matrixBound = READ_LIMITS.matrix;
const matrixBytes = values['matrix-bytes'] === undefined ? matrixBound : cli.wholeNumber('matrix-bytes', { min: 64, max: matrixBound });
const every = [...Object.keys(shapes), ...Object.keys(matrixShapes)];
const chosen = values.shapes === undefined ? every : cli.someOf('shapes', every);

interface Load {
  wallS: number;
  cpuS: number;
  peakMiB: number;
  issues: number;
  first?: string;
}

const dir = mkdtempSync(path.join(tmpdir(), 'bench-hostile-'));

const fileName = (name: string) => name.replace(/[^a-z0-9]+/gi, '_');

/** The file loaded `runs` times, each in a fresh process; the run of least CPU time. */
async function load(name: string, text: string, type: 'disagg' | 'nixl' = 'disagg', bytes = Buffer.byteLength(text)): Promise<Load & { bytes: number }> {
  const file = path.join(dir, `${fileName(name)}.yaml`);
  writeFileSync(file, text);
  let best: Load | undefined;
  for (let i = 0; i < runs; i++) {
    const run = await timedCommand('node', ['--import', 'tsx', path.join(packageRoot, 'bench/lib/validate-one.ts'), file, type], { cwd: packageRoot, timeoutMs: 600_000 });
    const last = run.output.trim().split('\n').pop() ?? '';
    if (run.exitCode !== 0 || !last.startsWith('{')) throw new Error(`${name}: the loader exited ${run.exitCode}:\n${run.output.slice(-2000)}`);
    const result = JSON.parse(last) as Load;
    if (!best || result.cpuS < best.cpuS) best = result;
  }
  return { ...best!, bytes };
}

/** A matrix shape: the matrix file and a CT perftest config naming it, validated as the run validates it. */
async function loadMatrix(name: string): Promise<Load & { bytes: number }> {
  const { ranks, text } = matrixShapes[name](matrixBytes);
  const matrix = `${fileName(name)}.txt`;
  writeFileSync(path.join(dir, matrix), text);
  const config = [
    'benchmark: {kind: ct-perftest, ranks: ' + ranks + ', nodes: 1, backend: shm, timeout_s: 60}',
    `ct_perftest: {iters: 1, traffic_pattern: {matrix_file: ${matrix}, mem_type: cpu}}`,
    '',
  ].join('\n');
  try {
    return await load(name, config, 'nixl', Buffer.byteLength(text));
  } finally {
    rmSync(path.join(dir, matrix), { force: true });
  }
}

async function main(): Promise<void> {
  try {
    const example = fg.sync('test_configs/disagg/perf/*.yaml', { cwd: packageRoot }).sort()[0];
    const baseline = await load('baseline', readFileSync(path.join(packageRoot, example), 'utf8'));
    const rows: Array<Array<string | number>> = [[`baseline: ${path.basename(example)}`, baseline.bytes, baseline.cpuS.toFixed(2), baseline.wallS.toFixed(2), baseline.peakMiB.toFixed(0), `${baseline.issues} issues`]];
    const figures: Record<string, Load & { bytes: number }> = {};
    for (const name of chosen) {
      const r = name in matrixShapes ? await loadMatrix(name) : await load(name, shapes[name](boundBytes));
      figures[name] = r;
      rows.push([name, r.bytes, r.cpuS.toFixed(2), r.wallS.toFixed(2), r.peakMiB.toFixed(0), (r.first ?? 'valid').slice(0, 90)]);
    }
    const over = await load('four times the bound', `a: "${'x'.repeat(4 * MAX_CONFIG_BYTES)}"\n`);
    if (!/more than the .* a config may be/.test(over.first ?? '')) throw new Error(`a file of ${over.bytes} bytes was not refused unread: ${over.first}`);
    rows.push(['four times the bound (refused unread)', over.bytes, over.cpuS.toFixed(2), over.wallS.toFixed(2), over.peakMiB.toFixed(0), (over.first ?? '').slice(0, 90)]);
    printTable(`Hostile configs of ${boundBytes / 1024} KiB (the bound: ${MAX_CONFIG_BYTES / 1024} KiB) and matrices of ${matrixBytes / 2 ** 20} MiB (the bound: ${matrixBound / 2 ** 20} MiB), loaded and validated (fastest of ${runs}; load average ${os.loadavg()[0].toFixed(1)} at the end)`, ['shape', 'bytes', 'CPU s', 'wall s', 'peak MiB', 'first issue'], rows);
    const all = Object.values(figures);
    const worstCpu = maxOf(all.map((r) => r.cpuS));
    const worstPeak = maxOf(all.map((r) => r.peakMiB));
    console.log(`\nworst CPU ${worstCpu.toFixed(2)} s (${(worstCpu / baseline.cpuS).toFixed(1)} x the example config's ${baseline.cpuS.toFixed(2)} s); worst peak ${worstPeak.toFixed(0)} MiB (the example's ${baseline.peakMiB.toFixed(0)} MiB)`);
    const goals: Goal[] = [
      { what: 'worst shape at its bound (config or matrix), CPU seconds to validate or refuse', value: Number(worstCpu.toFixed(2)), limit: 5, atMost: true, unit: ' s' },
      { what: 'worst shape at its bound (config or matrix), peak memory', value: Math.round(worstPeak), limit: 300, atMost: true, unit: ' MiB' },
    ];
    const met = printGoals(goals);
    appendResult('hostile-input', { boundBytes: MAX_CONFIG_BYTES, filledTo: boundBytes, matrixBound, matrixFilledTo: matrixBytes, baseline, shapes: figures, overBound: over }, goals);
    process.exitCode = met ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
