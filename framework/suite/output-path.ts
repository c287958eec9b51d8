// OUTPUT_PATH is checked once, before any job goes out: a run that can submit but not record is
// worse than one that does not start. The folder must be creatable and writable, and every file a
// run adds to must take what it will add: a regular file (not a folder), results.json readable as
// results, the CSV with this version's header. One line per problem, naming the path.
import { accessSync, constants, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import path from 'node:path';
import { checkResultsText, RESULTS_JSON_FILE, ResultsFileError } from '../results/json.ts';
import { PERF_CSV_FILE, perfCsvHeaderProblem } from '../results/csv.ts';
import { JOBS_FILE, LEDGER_FILE } from '../jobs/ledger.ts';
import { CLAIMS_FOLDER } from '../jobs/run-claims.ts';
import { LOG_FOLDERS } from '../scheduler/log-folder.ts';
import { REPORT_FILE } from '../results/report/report-file.ts';
import { EnvironmentError } from '../../runners/common/errors.ts';
import { OutputPathError } from './output-path-error.ts';

/** Files of OUTPUT_PATH a run appends to or replaces, and folders it writes into. */
const RUN_FILES = [RESULTS_JSON_FILE, PERF_CSV_FILE, LEDGER_FILE, JOBS_FILE, REPORT_FILE];
const RUN_FOLDERS = [LOG_FOLDERS, 'local-scheduler', CLAIMS_FOLDER];

/** The nearest existing ancestor of `target` (or target itself) that is not a folder. */
function fileInTheWay(target: string): string | undefined {
  for (let p = target; ; p = path.dirname(p)) {
    try {
      return statSync(p).isDirectory() ? undefined : p;
    } catch {
      // does not exist: look further up
    }
    if (path.dirname(p) === p) return undefined;
  }
}

/**
 * `mkdir -p` one level at a time. Node's own recursive mkdir loops forever where a folder exists
 * but refuses new entries with ENOENT (`/proc/self/x`: 100 % CPU, deaf to signals); here such a
 * folder is an error naming it.
 */
export function makeFolders(target: string): void {
  const missing: string[] = [];
  for (let p = path.resolve(target); ; p = path.dirname(p)) {
    try {
      if (statSync(p).isDirectory()) break;
      throw Object.assign(new EnvironmentError(`${p} is a file, not a folder`), { code: 'ENOTDIR' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    missing.unshift(p);
    if (path.dirname(p) === p) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' && statSync(folder).isDirectory()) continue;
      if (code === 'ENOENT') {
        throw Object.assign(new EnvironmentError(`${path.dirname(folder)} takes no new folders (mkdir ${folder}: ENOENT although its parent exists; a file system such as /proc)`), { code: 'ENOENT' });
      }
      throw error;
    }
  }
}

function what(stats: Stats): string {
  return stats.isFile() ? 'a file' : stats.isDirectory() ? 'a folder' : stats.isFIFO() ? 'a FIFO' : stats.isSocket() ? 'a socket' : stats.isCharacterDevice() || stats.isBlockDevice() ? 'a device' : 'neither a file nor a folder';
}

/** Why an existing output file cannot take what a run adds; undefined when it can (or is not there). */
function fileProblem(file: string): string | undefined {
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch {
    return undefined;
  }
  if (!stats.isFile()) return `${file} is ${what(stats)}, not a file`;
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
  } catch (error) {
    return `${file} cannot be written (${(error as NodeJS.ErrnoException).code})`;
  }
  const name = path.basename(file);
  if (name === RESULTS_JSON_FILE) {
    try {
      checkResultsText(file, readFileSync(file, 'utf8'));
    } catch (error) {
      if (error instanceof ResultsFileError) return `${error.message.replace(/; the file was not modified.*$/, '')}: this run could not add its results to it`;
      throw error;
    }
  }
  if (name === PERF_CSV_FILE) {
    const problem = perfCsvHeaderProblem(file);
    if (problem) return `${file}: ${problem}: this run could not add its rows to it`;
  }
  return undefined;
}

function folderProblem(folder: string): string | undefined {
  try {
    const stats = statSync(folder);
    return stats.isDirectory() ? undefined : `${folder} is ${what(stats)}, not a folder`;
  } catch {
    return undefined;
  }
}

/** Creates OUTPUT_PATH when needed and proves it writable; throws OutputPathError, one line per problem, otherwise. */
export function checkOutputPath(outputPath: string): void {
  const probe = path.join(outputPath, `.disagg-bench-write-check-${process.pid}`);
  try {
    makeFolders(outputPath);
    writeFileSync(probe, 'ok\n');
    rmSync(probe, { force: true });
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    const blocker = err.code === 'ENOTDIR' || err.code === 'EEXIST' ? fileInTheWay(outputPath) : undefined;
    const why = blocker ? `${blocker} is a file, not a folder` : err.code === 'ENOENT' || (err.code && err.message.startsWith(`${err.code}:`)) ? err.message : `${err.code ?? 'error'}: ${err.message}`;
    throw new OutputPathError(
      `OUTPUT_PATH=${outputPath} cannot be written: ${why}. Results, logs and the job ledger go there; ` +
        'point OUTPUT_PATH to a writable folder.',
      outputPath,
    );
  }
  const problems = [
    ...RUN_FILES.map((name) => fileProblem(path.join(outputPath, name))),
    ...RUN_FOLDERS.map((name) => folderProblem(path.join(outputPath, name))),
  ].filter((p): p is string => p !== undefined);
  if (problems.length > 0) {
    throw new OutputPathError(problems.map((p) => `OUTPUT_PATH=${outputPath}: ${p}; move it aside or point OUTPUT_PATH to another folder`).join('\n'), outputPath);
  }
}
