// `disagg-bench history export --format history|opensearch [-o FILE] [--run ID]... [--bulk INDEX]`
import { createWriteStream } from 'node:fs';
import { ndjsonLines, opensearchDocuments } from '../../history/opensearch.ts';
import { historySettings, onStore, parseOptions, UsageError } from './common.ts';

export const usage = `usage: disagg-bench history export --format history|opensearch [-o FILE] [--run ID|LABEL]... [--bulk INDEX]
  --format history: every record with its run, one JSON entry per line (name the file *.jsonl):
  \`history import\` reads it into either store, so a DuckDB history moves to PostgreSQL and back
  with nothing lost.
  --format opensearch: the history (or the runs named) as NDJSON documents in the field naming of upstream's
  OpenSearch perf index: s_/l_/d_/b_/ts_ type prefixes, its match keys (s_gpu_type, s_runtime,
  l_concurrency, l_isl, l_osl, the ctx/gen servers' fields), metrics as d_median_ttft,
  d_seq_throughput..., job fields (b_is_post_merge, s_branch, s_commit...), d_threshold_* and
  _id as upstream computes it. One document per test and label set (concurrency).
  -o, --output  file (default: standard output)
  --bulk INDEX  precede each document with an OpenSearch _bulk action line for INDEX`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(argv, { format: { type: 'string' }, output: { type: 'string', short: 'o' }, run: { type: 'string', multiple: true }, bulk: { type: 'string' } }, usage);
  if (values.help) return console.log(usage), 0;
  if (values.format !== 'opensearch' && values.format !== 'history') throw new UsageError(`--format ${values.format === undefined ? 'is required' : JSON.stringify(values.format)}: expected history or opensearch\n${usage}`);
  if (values.bulk && values.format !== 'opensearch') throw new UsageError(`--bulk is for --format opensearch\n${usage}`);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}\n${usage}`);
  const settings = historySettings();
  const out = values.output ? createWriteStream(values.output) : process.stdout;
  let documents = 0;
  const records = await onStore(settings, async (store) => {
    const runs = await store.runs();
    const wanted = values.run?.length ? values.run.map((ref) => runs.find((r) => r.runId === ref) ?? runs.filter((r) => r.label === ref).at(-1)) : runs;
    const missing = values.run?.filter((_, k) => !wanted[k]);
    if (missing?.length) throw new UsageError(`no run with the id or label ${missing.join(', ')} in ${store.description}`);
    return { records: await store.records(wanted.map((r) => r!.runId)), sources: new Map(wanted.map((r) => [r!.runId, r!.source])) };
  }).then(({ records, sources }) => {
    if (values.format === 'history') {
      for (const record of records) {
        out.write(`${JSON.stringify({ record, run: record.run, source: sources.get(record.run!.id) ?? 'run' })}\n`);
        documents++;
      }
      return [];
    }
    return records;
  });
  for (const record of records) {
    for (const doc of opensearchDocuments(record)) {
      out.write(ndjsonLines(doc, values.bulk ? { index: values.bulk } : undefined));
      documents++;
    }
  }
  if (out !== process.stdout) await new Promise<void>((resolve, reject) => (out as ReturnType<typeof createWriteStream>).end((err?: Error | null) => (err ? reject(err) : resolve())));
  console.error(values.format === 'history' ? `${documents} record(s)${values.output ? ` written to ${values.output}` : ''}` : `${documents} document(s) from ${records.length} record(s)${values.output ? ` written to ${values.output}` : ''}`);
  return 0;
}
