// `disagg-bench history runs [--json]`
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history runs [--json]
  Lists the runs the history holds, oldest first: end time (UTC), kind, tests, GPU type(s), branch,
  id, label, commit. --json: the same as one JSON array.`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { json: { type: 'boolean' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}: history runs takes none\n${usage}`);
  const settings = historySettings();
  const runs = await onStore(settings, (store) => store.runs());
  if (values.json) return console.log(JSON.stringify(runs, null, 2)), 0;
  for (const r of runs) {
    const when = new Date(r.endMs).toISOString().slice(0, 19).replace('T', ' ');
    console.log(
      `${when}  ${r.kind.padEnd(10)}  ${String(r.tests).padStart(5)} test(s)  ${(r.gpuTypes ?? '-').padEnd(8)}  ${(r.branch ?? '-').padEnd(12)}  ${r.runId}${r.label ? `  label=${r.label}` : ''}${r.commit ? `  commit=${r.commit.slice(0, 12)}` : ''}${r.source !== 'run' ? `  (${r.source})` : ''}`,
    );
  }
  console.log(`${runs.length} run(s)`);
  return 0;
}
