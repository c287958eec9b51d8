// Every benchmark under bench/ still runs: each with --smoke (bench/lib/smoke.ts: tiny sizes,
// seconds, no figure kept), as `npm test` runs this file, so a benchmark that rots fails the suite
// instead of the next person who measures. A new bench/*.ts without a row here fails too. Whether
// a figure meets its goal is not judged here (tiny sizes say nothing of speed): only that the
// script runs to its end and says so.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { clusterEnv, slurmDisabled } from '../setup/cluster.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** Each benchmark, and why it cannot run here when it cannot (then it is skipped, saying so). */
const BENCHMARKS: Record<string, { needs?: () => string | undefined }> = {
  collection: {},
  'config-load': {},
  rendezvous: {},
  'engine-host': {},
  'engine-inflight': {},
  'engine-ucx': {},
  'libfabric-shm': {},
  'ct-verify-timing': {},
  'engine-host-sweep': {},
  history: {},
  'netns-link': { needs: () => (process.getuid?.() === 0 ? undefined : 'needs root (network namespaces)') },
  orchestration: { needs: () => (slurmDisabled ? 'needs the local SLURM cluster (DISAGG_NO_SLURM=1)' : undefined) },
  'engine-gpu': { needs: () => (existsSync('/dev/nvidia0') ? undefined : 'needs an NVIDIA GPU (/dev/nvidia0)') },
  startup: {},
  'gate-simulation': {},
  'bisect-simulation': {},
  'hostile-input': {},
  cancel: {},
  'run-overhead': {},
  'unit-project': {},
  'llamacpp-serving': {},
};
/** Scripts under bench/ that are tools, not benchmarks: each is run below on a small input instead. */
const TOOLS = ['suite-durations'];
/** Modules under bench/ that other scripts import (no command of their own). */
const LIBRARIES = ['hostile-shapes', 'hostile-matrix-shapes'];

describe('bench/ smoke modes', () => {
  it('every script under bench/ has a row here', () => {
    const scripts = readdirSync(path.join(repoRoot, 'bench')).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, ''));
    expect(scripts.filter((s) => !(s in BENCHMARKS) && !TOOLS.includes(s) && !LIBRARIES.includes(s))).toEqual([]);
    expect(Object.keys(BENCHMARKS).filter((s) => !scripts.includes(s))).toEqual([]);
  });

  describe.concurrent('runs with --smoke', () => {
    for (const [name, { needs }] of Object.entries(BENCHMARKS)) {
      const why = needs?.();
      // The limits only catch a script that hangs: the smokes run at once, beside the rest of the
      // suite, and a loaded 2-core box has stretched the heaviest (each `vitest list` of its own)
      // from 40 s to over 9 min.
      it.skipIf(why !== undefined)(`bench/${name}.ts${why ? ` (skipped: ${why})` : ''}`, { timeout: 1_500_000 }, async () => {
        const env = name === 'orchestration' ? { ...process.env, ...clusterEnv() } : process.env;
        const run = await execa('node', ['--import', 'tsx', `bench/${name}.ts`, '--smoke'], { cwd: repoRoot, env, reject: false, all: true, timeout: 1_470_000 });
        expect(run.exitCode, run.all?.split('\n').slice(-40).join('\n')).toBe(0);
        expect(run.stdout).toContain(`smoke: bench/${name} runs`);
      });
    }
  });

  it('bench/suite-durations.ts reads a Vitest JSON report', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'suite-durations-'));
    try {
      const report = path.join(dir, 'report.json');
      const file = path.join(repoRoot, 'tests/common/size.test.ts');
      writeFileSync(report, JSON.stringify({
        numTotalTests: 1, numPassedTests: 1, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0,
        testResults: [{ name: file, startTime: 1000, endTime: 3500, assertionResults: [{ fullName: 'size parses', duration: 2400, status: 'passed' }] }],
      }));
      const run = await execa('node', ['--import', 'tsx', 'bench/suite-durations.ts', report], { cwd: repoRoot, reject: false, all: true });
      expect(run.exitCode, run.all).toBe(0);
      expect(run.stdout).toContain('tests: 1 (1 passed, 0 failed, 0 skipped) in 1 files');
      expect(run.stdout).toContain('tests/common/size.test.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
