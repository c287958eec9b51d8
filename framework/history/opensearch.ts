// `history export --format opensearch`: the history as NDJSON documents in the field naming of
// upstream's OpenSearch perf index, for teams whose dashboards read it. One document per test case
// and label set (upstream: per cmd_idx, one client concurrency), as test_perf_sanity.py
// upload_test_results_to_database assembles them:
// - type prefixes s_ (string), l_ (integer), d_ (float, always written with a fraction), b_ (bool),
//   ts_ (ms) as OpenSearchDB.typeCheckForOpenSearchDB checks them;
// - the match keys: s_gpu_type (lower case, as SUPPORTED_GPU_MAPPING), s_runtime, the config's
//   identity (s_benchmark_mode, l_num_ctx_servers, l_gen_tp, s_gen_cache_transceiver_backend,
//   l_isl, l_osl...) and l_concurrency from the labels;
// - metrics under upstream's names where upstream has one (SERVER_MEDIAN_TTFT -> d_median_ttft,
//   SERVER_REQUEST_THROUGHPUT -> d_seq_throughput...), d_<name in lower case> otherwise;
// - get_job_info's fields (b_is_post_merge, s_branch, s_commit, s_build_id... from the CI variables
//   kept with the run), b_is_valid, b_is_baseline false, b_is_regression, s_regression_info;
// - for post-merge documents d_threshold_post_merge_* / d_threshold_pre_merge_* and d_baseline_*,
//   as add_baseline_fields_to_post_merge_data embeds them. d_baseline_* is -1 (upstream's "none"):
//   upstream reads a positive embedded baseline as pinned by hand, and a computed one written here
//   would pin itself in their pipeline forever;
// - ts_created and @timestamp (the test's end), and _id = MD5 of json.dumps(doc, sort_keys=True,
//   indent=2) with _id "" (OpenSearchDB.add_id_of_json), so re-exporting the same history gives
//   the same ids.
import { createHash } from 'node:crypto';
import type { TestRecord } from '../results/json.ts';
import { POST_MERGE_THRESHOLD, PRE_MERGE_THRESHOLD } from '../metrics/regression-thresholds.ts';
import { isValid } from './rows.ts';
import { labelsKey } from './series-key.ts';
import { pyDumps, type PyValue } from './python-json.ts';
import { describeFinding } from './regression.ts';

/** Our serving metric names -> upstream's field names (test_perf_sanity.py PERF_METRIC_LOG_QUERIES). */
const UPSTREAM_METRIC: Record<string, string> = {
  SERVER_REQUEST_THROUGHPUT: 'seq_throughput',
  SERVER_OUTPUT_TOKEN_THROUGHPUT: 'token_throughput',
  SERVER_TOTAL_TOKEN_THROUGHPUT: 'total_token_throughput',
  SERVER_USER_THROUGHPUT: 'user_throughput',
};
for (const x of ['TTFT', 'TPOT', 'ITL', 'E2EL']) for (const s of ['MEAN', 'MEDIAN', 'P99']) UPSTREAM_METRIC[`SERVER_${s}_${x}`] = `${s.toLowerCase()}_${x.toLowerCase()}`;

const fieldName = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
export const metricField = (name: string) => `d_${UPSTREAM_METRIC[name] ?? fieldName(name)}`;

/** A typed field for a value of unknown type: s_, l_ or d_. */
function typed(key: string, value: string | number): [string, string | number] {
  if (typeof value === 'string') return [`s_${fieldName(key)}`, value];
  return [`${Number.isInteger(value) ? 'l' : 'd'}_${fieldName(key)}`, value];
}

const RUNTIME: Record<string, string> = { disagg: 'multi_node_disagg_server', wideep: 'multi_node_disagg_server' };

/** The documents of one record (one per label set). */
export function opensearchDocuments(record: TestRecord): Record<string, PyValue>[] {
  const run = record.run;
  const ci = run?.ci ?? {};
  const postMerge = (run?.kind ?? 'post-merge') === 'post-merge';
  const byLabels = new Map<string, TestRecord['metrics']>();
  for (const m of record.metrics) {
    const key = labelsKey(m.labels);
    if (!byLabels.has(key)) byLabels.set(key, []);
    byLabels.get(key)!.push(m);
  }
  const end = Date.parse(record.timing.end);
  return [...byLabels.entries()].map(([key, metrics]) => {
    const labels = JSON.parse(key) as Record<string, string | number>;
    const findings = (record.regression?.findings ?? []).filter((f) => labelsKey(f.labels) === key);
    const doc: Record<string, PyValue> = {
      b_is_baseline: false,
      b_is_valid: isValid(record),
      _id: '',
      s_host_node_name: ci.HOST_NODE_NAME ?? record.host,
      s_build_id: ci.BUILD_ID ?? ci.GITHUB_RUN_ID ?? ci.CI_PIPELINE_ID ?? '',
      s_build_url: ci.BUILD_URL ?? '',
      s_job_name: ci.JOB_NAME ?? ci.GITHUB_WORKFLOW ?? ci.CI_JOB_NAME ?? '',
      s_job_id: ci.BUILD_NUMBER ?? ci.GITHUB_RUN_NUMBER ?? ci.CI_JOB_ID ?? '',
      s_job_url: ci.JOB_URL ?? '',
      s_branch: run?.branch ?? ci.BRANCH_NAME ?? ci.GITHUB_REF_NAME ?? '',
      s_commit: run?.commit ?? ci.gitlabCommit ?? ci.GITHUB_SHA ?? '',
      b_is_post_merge: postMerge,
      b_is_pr_job: !postMerge,
      s_trigger_mr_user: '',
      s_trigger_mr_link: '',
      s_trigger_mr_id: '',
      s_trigger_mr_commit: postMerge ? '' : (run?.commit ?? ''),
      s_artifact_url: '',
      b_is_regression: findings.some((f) => f.regression),
      s_regression_info: findings.length ? [`Regression in ${record.testId}:`, ...findings.map((f) => `  ${describeFinding(record.testId, f)}`)].join('\n') : '',
      s_gpu_type: (record.gpuType ?? '').toLowerCase(),
      s_runtime: RUNTIME[record.type] ?? `disagg_bench_${record.type}`,
      s_test_case_name: `${record.testId}-${Object.entries(labels).map(([k, v]) => `${k === 'concurrency' ? 'con' : k}${v}`).join('_')}`,
      s_test_id: record.testId,
      s_test_type: record.type,
      s_category: record.category,
      s_config_file: record.configPath,
      s_slurm_job_id: record.jobId ?? '',
      s_verdict: record.verdict,
      s_run_id: run?.id ?? '',
      s_run_label: run?.label ?? '',
      ...Object.fromEntries(Object.entries(run?.identity ?? {}).map(([k, v]) => typed(k, v))),
      ...Object.fromEntries(Object.entries(labels).map(([k, v]) => typed(k, v))),
      ts_created: end,
      '@timestamp': new Date(end).toISOString(),
    };
    for (const m of metrics) {
      const field = metricField(m.name);
      doc[field] = m.value;
      if (!postMerge) continue;
      const suffix = field.slice(2);
      const t = run?.thresholds?.[m.name];
      doc[`d_baseline_${suffix}`] = -1;
      doc[`d_threshold_post_merge_${suffix}`] = t?.postMerge ?? POST_MERGE_THRESHOLD;
      doc[`d_threshold_pre_merge_${suffix}`] = t?.preMerge ?? PRE_MERGE_THRESHOLD;
    }
    doc._id = documentId(doc);
    return doc;
  });
}

const isFloatKey = (key: string) => key.startsWith('d_');

/** OpenSearchDB.add_id_of_json: MD5 of json.dumps(data, sort_keys=True, indent=2), _id "" included. */
export function documentId(doc: Record<string, PyValue>): string {
  return createHash('md5').update(pyDumps({ ...doc, _id: '' }, { indent: 2, sortKeys: true, isFloatKey }), 'utf8').digest('hex');
}

/** One NDJSON line; with `bulk`, preceded by the _bulk API's action line (the _id moves there). */
export function ndjsonLines(doc: Record<string, PyValue>, bulk?: { index: string }): string {
  if (!bulk) return pyDumps(doc, { isFloatKey }) + '\n';
  const { _id, ...source } = doc;
  return `${pyDumps({ index: { _index: bulk.index, _id } })}\n${pyDumps(source, { isFloatKey })}\n`;
}
