// Checks a folder of upstream TensorRT-LLM disagg test configs and test lists (its
// tests/integration/defs/perf/disagg/{test_configs,testlist}, copied somewhere OUTSIDE this
// repository) the way a user's run would see them: every config is validated, listed for each GPU
// type it names (RUN or SKIP), and its job built (sbatch script and commands, nothing submitted);
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
import { discoverConfigs, type ConfigFile } from '../framework/config/discover.ts';
import { formatIssue } from '../framework/config/issue.ts';
import { resolveConfig } from '../framework/config/resolve.ts';
import { loadPlannedTest } from '../framework/select/plan.ts';
import { gpuTypeFromName } from '../framework/select/gpu.ts';
import { readTestList, selectByTestList } from '../framework/select/testlist.ts';
import { testType } from '../framework/types/registry.ts';

const packageRoot = path.resolve(import.meta.dirname, '..');

/** What a user sets for upstream's placeholders (stand-in paths; nothing is read from them). */
const userEnv: NodeJS.ProcessEnv = {
  MODEL_DIR: '/models',
  DATASET_DIR: '/datasets',
  CONTAINER_IMAGE: '/images/tensorrt-llm.sqsh',
  SCRIPT_DIR: '/scripts',
  SLURM_PARTITION: 'batch',
  SLURM_ACCOUNT: 'account',
};

interface FileResult {
  file: string;
  id: string;
  gpus: string[];
  /** GPU type -> RUN or the skip reason. */
  listing: Record<string, string>;
  issues: string[];
  build?: string;
}

async function check(file: ConfigFile, scratch: string): Promise<FileResult> {
  const planned = loadPlannedTest(file, { gpuType: undefined, source: 'none' }, userEnv);
  const raw = planned.config as { metadata?: { supported_gpus?: string[] } } | undefined;
  const type = testType(file.testType);
  const gpus = type && raw ? (type.supportedGpus(raw as Record<string, unknown>) ?? []) : [];
  const result: FileResult = { file: file.displayFile, id: file.id, gpus, listing: {}, issues: planned.issues.map(formatIssue) };
  // What `GPU_TYPE=<gpu> disagg-bench list` says of it, for each GPU type it names.
  for (const gpu of gpus) {
    const listed = loadPlannedTest(file, { gpuType: gpuTypeFromName(gpu), source: 'GPU_TYPE' }, userEnv);
    result.listing[gpu] = listed.skipReason ? 'SKIP' : listed.issues.length ? 'INVALID' : 'RUN';
  }
  if (result.issues.length > 0 || !type || !planned.config) return result;
  const resolved = resolveConfig(planned.config, type.envOverrides, userEnv).config;
  const logDir = path.join(scratch, 'slurm_logs', file.id);
  try {
    const built = await type.buildJob({
      testId: file.id, category: file.category, config: resolved, logDir, workDir: path.dirname(scratch), packageRoot,
      gpuType: gpus[0] ? gpuTypeFromName(gpus[0]) : undefined,
    });
    execFileSync('bash', ['-n', built.scriptPath], { stdio: 'pipe' });
  } catch (error) {
    result.build = (error as Error).message.split('\n')[0];
  }
  return result;
}

const escape = (text: string) => text.replace(/\|/g, '\\|');

async function main(argv: string[]): Promise<number> {
  const folder = argv.find((a) => !a.startsWith('--'));
  if (!folder) {
    console.error('usage: npx tsx scripts/check-upstream-corpus.ts <folder with test_configs/ and testlist/> [--all]');
    return 2;
  }
  const workDir = path.resolve(folder);
  const scratch = mkdtempSync(path.join(tmpdir(), 'upstream-corpus-'));
  try {
    const discovery = discoverConfigs(workDir);
    const results: FileResult[] = [];
    for (const file of discovery.files) results.push(await check(file, scratch));
    const refused = results.filter((r) => r.issues.length > 0 || r.build);
    const accepted = results.filter((r) => !refused.includes(r));
    const byCategory = new Map<string, [number, number]>();
    for (const r of results) {
      const key = r.file.split('/').slice(1, 3).join('/');
      const [a, t] = byCategory.get(key) ?? [0, 0];
      byCategory.set(key, [a + (refused.includes(r) ? 0 : 1), t + 1]);
    }
    console.log(`## Configs: ${accepted.length} of ${results.length} accepted (validated, listed RUN on each supported GPU type, job built)\n`);
    console.log('| folder | accepted | files |\n|---|---|---|');
    for (const [key, [a, t]] of [...byCategory].sort()) console.log(`| ${key} | ${a} | ${t} |`);
    const notRun = accepted.filter((r) => Object.values(r.listing).some((s) => s !== 'RUN'));
    if (notRun.length) console.log(`\nAccepted but not RUN on a GPU type they name: ${notRun.map((r) => r.id).join(', ')}`);
    if (discovery.misplaced.length) console.log(`\nIgnored (not at test_configs/<type>/<category>/): ${discovery.misplaced.join(', ')}`);
    console.log('\n## Refused configs\n\n| file | reason (and what upstream does) |\n|---|---|');
    for (const r of refused) {
      const reasons = r.build ? [r.build] : r.issues.map((i) => i.replace(`${r.file}:`, ''));
      console.log(`| ${escape(r.file)} | ${escape(reasons.join('<br>'))} |`);
    }
    if (argv.includes('--all')) {
      console.log('\n## Accepted configs\n\n| id | GPU types (RUN) |\n|---|---|');
      for (const r of accepted) console.log(`| ${r.id} | ${r.gpus.join(', ')} |`);
    }
    const listDir = path.join(workDir, 'testlist');
    let lists: string[] = [];
    try {
      lists = readdirSync(listDir).filter((f) => f.endsWith('.txt')).sort();
    } catch {
      // no test lists in this folder
    }
    if (lists.length) {
      console.log('\n## Test lists\n\n| list | ids | match a config | ids that match none |\n|---|---|---|---|');
      for (const list of lists) {
        try {
          const parsed = readTestList(path.join('testlist', list), workDir);
          const selection = selectByTestList(discovery.files, parsed);
          const unknown = selection.unknown.map((u) => `${u.id} (line ${u.line})`).join('<br>');
          console.log(`| ${list} | ${parsed.ids.length} | ${selection.selected.length} | ${escape(unknown) || '-'} |`);
        } catch (error) {
          console.log(`| ${list} | - | - | ${escape((error as Error).message)} |`);
        }
      }
    }
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

process.exitCode = await main(process.argv.slice(2));
