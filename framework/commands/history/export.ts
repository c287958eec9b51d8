// `disagg-bench history export --format opensearch [-o history.ndjson] [--run ID]... [--bulk INDEX]`
import { createWriteStream } from 'node:fs';
import { ndjsonLines, opensearchDocuments } from '../../history/opensearch.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history export --format opensearch [-o history.ndjson] [--run ID|LABEL]... [--bulk INDEX]
  Writes the history (or the runs named) as NDJSON documents in the field naming of upstream's
  OpenSearch perf index: s_/l_/d_/b_/ts_ type prefixes, its match keys (s_gpu_type, s_runtime,
  l_concurrency, l_isl, l_osl, the ctx/gen servers' fields), metrics as d_median_ttft,
  d_seq_throughput..., job fields (b_is_post_merge, s_branch, s_commit...), d_threshold_* and
  _id as upstream computes it. One document per test and label set (concurrency).
  -o, --output  file (default: standard output)
  --bulk INDEX  precede each document with an OpenSearch _bulk action line for INDEX`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { format: { type: 'string' }, output: { type: 'string', short: 'o' }, run: { type: 'string', multiple: true }, bulk: { type: 'string' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (values.format !== 'opensearch') throw new UsageError(`--format ${values.format === undefined ? 'is required' : JSON.stringify(values.format)}: the one format is opensearch\n${usage}`);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  const settings = historySettings();
  const out = values.output ? createWriteStream(values.output) : process.stdout;
  let documents = 0;
  const records = await onStore(settings, async (store) => {
    const runs = await store.runs();
    const wanted = values.run?.length ? values.run.map((ref) => runs.find((r) => r.runId === ref) ?? runs.filter((r) => r.label === ref).at(-1)) : runs;
    const missing = values.run?.filter((_, k) => !wanted[k]);
    if (missing?.length) throw new UsageError(`no run with the id or label ${missing.join(', ')} in ${store.description}`);
    return store.records(wanted.map((r) => r!.runId));
  });
  for (const record of records) {
    for (const doc of opensearchDocuments(record)) {
      out.write(ndjsonLines(doc, values.bulk ? { index: values.bulk } : undefined));
      documents++;
    }
  }
  if (out !== process.stdout) await new Promise<void>((resolve, reject) => (out as ReturnType<typeof createWriteStream>).end((err?: Error | null) => (err ? reject(err) : resolve())));
  console.error(`${documents} document(s) from ${records.length} record(s)${values.output ? ` written to ${values.output}` : ''}`);
  return 0;
}
