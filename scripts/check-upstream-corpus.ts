// Checks a folder of upstream TensorRT-LLM disagg test configs and test lists (its
// tests/integration/defs/perf/disagg/{test_configs,testlist}, copied somewhere OUTSIDE this
// repository) the way a user's run would see them: every config is validated, listed for each GPU
// type it names (WAITING: it would run, or SKIPPED), and its job built (sbatch script and commands, nothing submitted);
// every test list is matched against the configs. Prints the counts and one line per refused
// file with the reason (each reason says what upstream does there) as Markdown, the figures of
// docs/trtllm-compatibility.md.
//   npx tsx scripts/check-upstream-corpus.ts /tmp/scratch-trtllm/upstream [--all]
// --all also lists the accepted files. Placeholders are filled with stand-in paths, as a user's
// MODEL_DIR, DATASET_DIR, CONTAINER_IMAGE... would.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { discoverConfigs, type ConfigFile } from '../framework/config/discover.ts';
import { formatIssue } from '../framework/config/issue.ts';
import { resolveConfig } from '../framework/config/resolve.ts';
import { loadPlannedTest } from '../framework/select/plan.ts';
import { plannedState } from '../framework/select/planned-state.ts';
import { STATE_WORDS } from '../framework/results/test-states.ts';
import { gpuTypeFromName } from '../framework/select/gpu.ts';
import { readTestList, selectByTestList } from '../framework/select/testlist.ts';
import { testType } from '../framework/types/registry.ts';
import { testLogDir } from '../framework/scheduler/log-folder.ts';

const packageRoot = path.resolve(import.meta.dirname, '..');

/** What a user sets for upstream's placeholders (stand-in paths; nothing is read from them). */
const userEnv: NodeJS.ProcessEnv = {
  MODEL_DIR: '/models',
  DATASET_DIR: '/datasets',
  CONTAINER_IMAGE: '/images/tensorrt-llm.sqsh',
  SCRIPT_DIR: '/scripts',
  SLURM_PARTITION: 'batch',
  SLURM_ACCOUNT: 'account',
  HF_HOME_DIR: '/hf-home',
};

export interface FileResult {
  file: string;
  id: string;
  gpus: string[];
  /** GPU type -> RUN or the skip reason. */
  listing: Record<string, string>;
  issues: string[];
  build?: string;
  /** Where its job was built (kept only when checkCorpus is given a jobs folder). */
  jobDir?: string;
}

async function check(file: ConfigFile, scratch: string, jobsDir: string): Promise<FileResult> {
  const planned = loadPlannedTest(file, { gpuType: undefined, source: 'none' }, userEnv);
  const type = testType(file.testType);
  const gpus = planned.supportedGpus ?? [];
  const result: FileResult = { file: file.displayFile, id: file.id, gpus, listing: {}, issues: planned.issues.map(formatIssue) };
  // What `GPU_TYPE=<gpu> disagg-bench list` says of it, for each GPU type it names.
  for (const gpu of gpus) {
    const listed = loadPlannedTest(file, { gpuType: gpuTypeFromName(gpu), source: 'GPU_TYPE' }, userEnv);
    result.listing[gpu] = STATE_WORDS[plannedState(listed)].word;
  }
  if (result.issues.length > 0 || !type || !planned.config) return result;
  const resolved = resolveConfig(planned.config, type.envOverrides, userEnv).config;
  const logDir = testLogDir(jobsDir, file.id);
  try {
    const built = await type.buildJob({
      testId: file.id, category: file.category, config: resolved, logDir, workDir: path.dirname(scratch), packageRoot,
      gpuType: gpus[0] ? gpuTypeFromName(gpus[0]) : undefined,
    });
    execFileSync('bash', ['-n', built.scriptPath], { stdio: 'pipe' });
    result.jobDir = logDir;
  } catch (error) {
    result.build = (error as Error).message.split('\n')[0];
  }
  return result;
}

const escapePipes = (text: string) => text.replace(/\|/g, '\\|');

export interface ListResult {
  list: string;
  ids?: number;
  matched?: number;
  /** Ids whose config is refused (upstream cannot run them either; see the refused table). */
  refused?: string[];
  unknown: string[];
  error?: string;
}

export interface CorpusReport {
  results: FileResult[];
  refused: FileResult[];
  accepted: FileResult[];
  misplaced: string[];
  lists: ListResult[];
}

/**
 * Validates, lists and builds every config of `workDir`, and matches its test lists. The jobs are
 * built in a scratch folder removed afterwards, or under `jobsDir` (kept) when given.
 */
export async function checkCorpus(workDir: string, jobsDir?: string): Promise<CorpusReport> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'upstream-corpus-'));
  try {
    const discovery = discoverConfigs(workDir);
    const results: FileResult[] = [];
    for (const file of discovery.files) results.push(await check(file, scratch, jobsDir ?? scratch));
    const refused = results.filter((r) => r.issues.length > 0 || r.build);
    const lists: ListResult[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(path.join(workDir, 'testlist')).filter((f) => f.endsWith('.txt')).sort();
    } catch {
      // no test lists in this folder
    }
    for (const list of names) {
      try {
        const parsed = readTestList(path.join('testlist', list), workDir);
        const selection = selectByTestList(discovery.files, parsed);
        const refusedIds = new Set(refused.map((r) => r.id));
        lists.push({
          list,
          ids: parsed.ids.length,
          matched: selection.selected.length,
          refused: selection.selected.filter((f) => refusedIds.has(f.id)).map((f) => f.id),
          unknown: selection.unknown.map((u) => `${u.id} (line ${u.line})`),
        });
      } catch (error) {
        lists.push({ list, unknown: [], error: (error as Error).message });
      }
    }
    return { results, refused, accepted: results.filter((r) => !refused.includes(r)), misplaced: discovery.misplaced, lists };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The report as Markdown (docs/trtllm-compatibility.md's tables). */
export function formatCorpusReport(report: CorpusReport, all = false): string {
  const out: string[] = [];
  const { results, refused, accepted } = report;
  const byCategory = new Map<string, [number, number]>();
  for (const r of results) {
    const key = r.file.split('/').slice(1, 3).join('/');
    const [a, t] = byCategory.get(key) ?? [0, 0];
    byCategory.set(key, [a + (refused.includes(r) ? 0 : 1), t + 1]);
  }
  out.push(`## Configs: ${accepted.length} of ${results.length} accepted (validated, listed WAITING, i.e. it would run, on each supported GPU type, job built)`, '');
  out.push('| folder | accepted | files |', '|---|---|---|');
  for (const [key, [a, t]] of [...byCategory].sort()) out.push(`| ${key} | ${a} | ${t} |`);
  const notRun = accepted.filter((r) => Object.values(r.listing).some((s) => s !== STATE_WORDS.waiting.word));
  if (notRun.length) out.push('', `Accepted but not run (not WAITING) on a GPU type they name: ${notRun.map((r) => r.id).join(', ')}`);
  if (report.misplaced.length) out.push('', `Ignored (not at test_configs/<type>/<category>/): ${report.misplaced.join(', ')}`);
  out.push('', '## Refused configs', '', '| file | reason (and what upstream does) |', '|---|---|');
  for (const r of refused) {
    const reasons = r.build ? [r.build] : r.issues.map((i) => i.replace(`${r.file}:`, ''));
    out.push(`| ${escapePipes(r.file)} | ${escapePipes(reasons.join('<br>'))} |`);
  }
  if (all) {
    out.push('', '## Accepted configs', '', '| id | GPU types (WAITING) |', '|---|---|');
    for (const r of accepted) out.push(`| ${r.id} | ${r.gpus.join(', ')} |`);
  }
  if (report.lists.length) {
    out.push('', '## Test lists', '', '| list | ids | match a config | of which refused | ids that match none |', '|---|---|---|---|---|');
    for (const l of report.lists) {
      out.push(
        l.error
          ? `| ${l.list} | - | - | - | ${escapePipes(l.error)} |`
          : `| ${l.list} | ${l.ids} | ${l.matched} | ${escapePipes((l.refused ?? []).join('<br>')) || '-'} | ${escapePipes(l.unknown.join('<br>')) || '-'} |`,
      );
    }
  }
  return `${out.join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const folder = argv.find((a) => !a.startsWith('--'));
  if (!folder) {
    console.error('usage: npx tsx scripts/check-upstream-corpus.ts <folder with test_configs/ and testlist/> [--all]');
    return 2;
  }
  process.stdout.write(formatCorpusReport(await checkCorpus(path.resolve(folder)), argv.includes('--all')));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
