// `disagg-bench history compare <run A> <run B> [-o comparison.csv]`
import { writeFile } from 'node:fs/promises';
import { compareRuns, comparisonCsv, unmeasuredComparisonLine } from '../../history/compare-runs.ts';
import { compareSlurmLogs, isSlurmLogsFolder } from '../../history/kv-perf-runs.ts';
import { resolveRun } from '../../history/run-ref.ts';
import type { HistoryStore } from '../../history/store.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history compare <run A> <run B> [-o comparison.csv] [--label0 A] [--label1 B]
  Two runs side by side, as upstream's compare_kv_perf_runs.py writes them: a CSV whose first row
  names the groups (run A, run B, delta_pct), whose second names the metrics, one row per test and
  label set; values with 4 decimals, delta_pct = (B - A) / A * 100 with 2.
  A run: an id or label in the history, latest, previous, or a results.json file (its latest run).
  Two slurm_logs folders (OUTPUT_PATH/slurm_logs, or upstream's) are compared exactly as
  compare_kv_perf_runs.py does: concurrency_<N>/result.json of the -cpp and -python test folders,
  its six metrics, its groups and headers (--label0/--label1 default run0/run1).
  --run0/--run1 (upstream's flags) are accepted for the two runs.
  -o, --output  CSV file (upstream writes kv_perf_comparison.csv into the current folder; here the
                CSV goes to standard output unless this names a file)`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    { output: { type: 'string', short: 'o' }, label0: { type: 'string' }, label1: { type: 'string' }, run0: { type: 'string' }, run1: { type: 'string' } },
    usage,
  );
  if (values.help) return console.log(usage), 0;
  const refs = [values.run0 ?? positionals[0], values.run1 ?? positionals[values.run0 ? 0 : 1]];
  if (!refs[0] || !refs[1] || positionals.length > 2) throw new UsageError(`name two runs\n${usage}`);
  // Two slurm_logs folders: upstream's own input, read and written exactly as upstream does.
  if (refs.every((r) => isSlurmLogsFolder(r!))) {
    const labels: [string, string] = [values.label0 ?? 'run0', values.label1 ?? 'run1'];
    const result = compareSlurmLogs(refs[0]!, refs[1]!, labels, (line) => console.error(line));
    const say = values.output ? console.log : console.error;
    say(`Run0 (${labels[0]}): ${result.counts[0]} entries\nRun1 (${labels[1]}): ${result.counts[1]} entries\nTotal unique (config, concurrency) pairs: ${result.rows.length}`);
    if (!values.output) return process.stdout.write(comparisonCsv(result, true)), 0;
    await writeFile(values.output, comparisonCsv(result, true));
    console.log(`\nWritten ${result.rows.length} rows to ${values.output}`);
    return 0;
  }
  const settings = historySettings();
  let opened: HistoryStore | undefined;
  const compare = async (store: () => Promise<HistoryStore>) => {
    const [a, b] = [await resolveRun(refs[0]!, store), await resolveRun(refs[1]!, store)];
    return { a, b, comparison: compareRuns(a.records, b.records, [values.label0 ?? a.name, values.label1 ?? b.name]) };
  };
  // Two results files need no store at all.
  const needsStore = !(refs.every((r) => r!.endsWith('.json')));
  const { a, b, comparison } = needsStore
    ? await onStore(settings, (store) => ((opened = store), compare(async () => opened!)))
    : await compare(async () => {
        throw new UsageError('unreachable');
      });
  const left = unmeasuredComparisonLine(comparison);
  const summary = `Run A (${a.name}): ${a.records.length} test(s)\nRun B (${b.name}): ${b.records.length} test(s)${left ? `\n${left}` : ''}`;
  if (!values.output) {
    console.error(summary);
    process.stdout.write(comparisonCsv(comparison));
    return 0;
  }
  await writeFile(values.output, comparisonCsv(comparison));
  console.log(`${summary}\nWritten ${comparison.rows.length} rows to ${values.output}`);
  return 0;
}
