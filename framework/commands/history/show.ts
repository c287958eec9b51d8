// `disagg-bench history show <test id> [--metric M] [--json]`
import { InputError } from '../../../runners/common/errors.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history show <test id> [--metric NAME] [--json]
  Prints the test's values over time, one block per GPU type, metric and label set: time (UTC),
  run kind, branch, run (label), value; '*' marks values that feed no baseline (pre-merge or local,
  or a test that failed its own checks). --json: the values as one JSON array. No value of the
  test (or metric): one line, exit 3.`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { metric: { type: 'string' }, json: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length !== 1) throw new UsageError(`name one test id\n${usage}`);
  const settings = historySettings();
  const { points, store } = await onStore(settings, async (store) => ({ points: await store.points({ testIds: positionals, metric: values.metric }), store: store.description }));
  // Nothing to show is no answer (exit 3, commands/history.ts), never 1: that says "a regression".
  if (points.length === 0) throw new InputError(`no values of ${positionals[0]}${values.metric ? ` ${values.metric}` : ''} in ${store}; \`disagg-bench history runs\` lists what it holds`);
  if (values.json) {
    console.log(JSON.stringify(points, null, 2));
    return 0;
  }
  // One block per GPU type too: two GPUs' values are two series, never one line.
  const blocks = new Map<string, typeof points>();
  for (const p of points) {
    const key = `${p.metric} ${Object.entries(p.labels).map(([k, v]) => `${k}=${v}`).join(' ')}`.trim() + ` on ${p.gpuType ?? 'no GPU type'}`;
    if (!blocks.has(key)) blocks.set(key, []);
    blocks.get(key)!.push(p);
  }
  for (const [key, series] of blocks) {
    console.log(`${positionals[0]} ${key} (${series[0].unit || 'no unit'}${series[0].higherIsBetter === undefined ? '' : series[0].higherIsBetter ? ', higher is better' : ', lower is better'})`);
    for (const p of series) {
      const when = new Date(p.tsMs).toISOString().slice(0, 19).replace('T', ' ');
      console.log(`  ${when}  ${p.runKind.padEnd(10)}  ${(p.branch ?? '-').padEnd(12)}  ${(p.runLabel ? `${p.runLabel} (${p.runId})` : p.runId).padEnd(40)}  ${p.value}${p.postMerge && p.valid ? '' : ' *'}`);
    }
  }
  return 0;
}
