import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractMetrics } from '../../framework/metrics/log-parser.ts';

const fixtures = fileURLToPath(new URL('../fixtures/logs/', import.meta.url));
let logDir: string;

beforeEach(async () => {
  logDir = await mkdtemp(path.join(tmpdir(), 'log-parser-'));
  await copyFile(path.join(fixtures, 'serving/6_bench.log'), path.join(logDir, '6_bench.log'));
  await copyFile(path.join(fixtures, 'lm-eval/7_accuracy_eval_gsm8k.log'), path.join(logDir, '7_accuracy_eval_gsm8k.log'));
  await copyFile(path.join(fixtures, 'lm-eval/7_accuracy_eval_mmlu.log'), path.join(logDir, '7_accuracy_eval_mmlu.log'));
});
afterEach(() => rm(logDir, { recursive: true, force: true }));

describe('extractMetrics', () => {
  it('runs each spec on its logs and keeps only the names asked for', async () => {
    const { metrics, problems } = await extractMetrics(logDir, [
      { logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_E2EL'] },
      { logFile: '7_accuracy_eval_*.log', extractor: 'lm-eval', names: ['ACCURACY'] },
    ]);
    expect(problems).toEqual([]);
    expect(metrics.filter((m) => m.name.startsWith('SERVER')).map((m) => `${m.name}@${m.labels.concurrency}=${m.value}`)).toEqual([
      'SERVER_MEDIAN_TTFT@8=198.43',
      'SERVER_MEDIAN_E2EL@8=18187.02',
      'SERVER_MEDIAN_TTFT@16=230.12',
      'SERVER_MEDIAN_E2EL@16=20031.77',
    ]);
    const datasets = new Set(metrics.filter((m) => m.name === 'ACCURACY').map((m) => m.labels.dataset));
    expect(datasets).toEqual(new Set(['gsm8k', 'mmlu', 'humanities', 'formal_logic', 'world_religions', 'stem', 'abstract_algebra']));
    expect(metrics.some((m) => m.name === 'ACCURACY_STDERR')).toBe(false);
  });

  it('reports missing, empty and unknown logs, prefixed with the log path', async () => {
    await writeFile(path.join(logDir, 'empty.log'), '\n  \n');
    const { metrics, problems } = await extractMetrics(logDir, [
      { logFile: 'absent.log', extractor: 'serving' },
      { logFile: 'optional.log', extractor: 'serving', optional: true },
      { logFile: 'empty.log', extractor: 'serving' },
      { logFile: '6_bench.log', extractor: 'nixl-table' },
    ]);
    expect(metrics).toEqual([]);
    expect(problems.slice(0, 2)).toEqual([`absent.log: no such log in ${logDir}`, 'empty.log: log is empty']);
    // The known list grows with every registered extractor; it must name them, whatever they are.
    expect(problems[2]).toMatch(/^6_bench\.log: unknown extractor 'nixl-table' \(known: serving, lm-eval, regex(, [\w-]+)*\)$/);
    expect(problems).toHaveLength(3);
  });

  it('prefixes extractor problems with the file and names a requested metric nothing produced', async () => {
    await copyFile(path.join(fixtures, 'serving/6_bench_truncated.log'), path.join(logDir, 'cut.log'));
    const cut = await extractMetrics(logDir, [{ logFile: 'cut.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT'] }]);
    expect(cut.problems[0]).toMatch(/^cut\.log: line 70: log ends in the middle of a line/);
    const wrong = await extractMetrics(logDir, [{ logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT', 'SERVER_MEDIAN_TTTF'] }]);
    expect(wrong.problems).toEqual(['6_bench.log: no value for SERVER_MEDIAN_TTTF']);
  });

  it('applies a config regex override', async () => {
    const { metrics, problems } = await extractMetrics(logDir, [
      { logFile: '6_bench.log', extractor: 'regex', pattern: '^Mean TTFT \\(ms\\):\\s+([0-9.]+)', names: ['MEAN_TTFT'], unit: 'ms' },
    ]);
    expect(problems).toEqual([]);
    expect(metrics.map((m) => m.value)).toEqual([214.57, 251.04]);
  });
});

describe('a NUL byte inside a result line', () => {
  it('fails the test naming the line, where the extractor alone would have lost that round\'s value without a word', async () => {
    const text = await readFile(path.join(fixtures, 'serving/6_bench.log'), 'utf8');
    // The second round's median TTFT, its digits broken by a NUL (a zeroed block, an overwrite).
    await writeFile(path.join(logDir, '6_bench.log'), text.replace('Median TTFT (ms):                        230.12', 'Median TTFT (ms):                        23\u00000.12'));
    const spec = { logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT'] };
    const { metrics, problems } = await extractMetrics(logDir, [spec]);
    expect(metrics.map((m) => m.labels.concurrency)).toEqual([8]);
    expect(problems).toEqual([
      '6_bench.log:65: a NUL byte in the line "Median TTFT (ms):                        23\\00.12    ": the log is damaged (a crash or two writers?), and a value on such a line cannot be read',
    ]);
  });

  it('a log without one is read as before', async () => {
    expect((await extractMetrics(logDir, [{ logFile: '6_bench.log', extractor: 'serving', names: ['SERVER_MEDIAN_TTFT'] }])).problems).toEqual([]);
  });
});
