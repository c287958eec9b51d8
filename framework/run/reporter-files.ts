// Where the reports of Vitest's file-writing reporters go under `disagg-bench run`. Vitest's own
// `--outputFile FILE` and `--outputFile.<reporter>=FILE` are taken as Vitest takes them (a path
// relative to where the command runs, as --output is); a file reporter named without one writes
// into the run's folder instead of onto standard output, where the run's own lines already go.
import path from 'node:path';
import { UsageError } from '../../runners/common/errors.ts';

/** Reporters that write one file, and the name of that file in the run's folder when none is given. */
const FILE_REPORTERS: Readonly<Record<string, string>> = { junit: 'junit.xml', json: 'vitest-report.json' };

export interface OutputFiles {
  /** argv without the --outputFile words. */
  rest: string[];
  /** --outputFile FILE (every file reporter), and --outputFile.NAME=FILE per reporter. */
  all?: string;
  byReporter: Map<string, string>;
}

const OPTION = /^--outputFile(?:\.([A-Za-z][\w-]*))?(?:=(.*))?$/s;

/** Takes Vitest's --outputFile words out of argv (`--outputFile.junit=F`, `--outputFile.junit F`, `--outputFile F`). */
export function takeOutputFiles(argv: readonly string[]): OutputFiles {
  const out: OutputFiles = { rest: [], byReporter: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      out.rest.push(...argv.slice(i));
      break;
    }
    const match = OPTION.exec(word);
    if (!match) {
      out.rest.push(word);
      continue;
    }
    const [, reporter, inline] = match;
    const value = inline ?? argv[++i];
    if (value === undefined || value === '' || (inline === undefined && value.startsWith('-'))) {
      throw new UsageError(`${word.replace(/=.*$/s, '')} needs a file: --outputFile${reporter ? `.${reporter}` : ''}=FILE`, 'outputFile');
    }
    const file = path.resolve(value);
    if (reporter) out.byReporter.set(reporter, file);
    else out.all = file;
  }
  return out;
}

/**
 * Vitest's `outputFile` for the reporters named: the files given, and for a file reporter given
 * none, its file in the run's folder. Undefined when no reporter writes a file.
 */
export function outputFileOption(reporters: readonly string[], given: OutputFiles, runFolder: string): Record<string, string> | undefined {
  const files: Record<string, string> = {};
  for (const reporter of new Set(reporters)) {
    const file = given.byReporter.get(reporter) ?? given.all ?? (FILE_REPORTERS[reporter] ? path.join(runFolder, FILE_REPORTERS[reporter]) : undefined);
    if (file) files[reporter] = file;
  }
  for (const [reporter, file] of given.byReporter) files[reporter] ??= file;
  return Object.keys(files).length > 0 ? files : undefined;
}
