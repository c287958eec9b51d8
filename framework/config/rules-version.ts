// The version of the validation rules, for the config cache (parse-cache.ts): a hash of every
// source file validation may run (the framework's and the runners' TypeScript: the test types'
// schemas and rules import from both) and of the installed packages (package-lock.json: ajv's and
// yaml's versions). Any edit to them makes every cached verdict stale at once, so a changed schema
// or rule is never hidden behind a cached result. Hashing the ~460 files (~2.3 MB) costs ~25 ms; the
// version is therefore kept with each file's stamp (file-stamp.ts) in node_modules/.cache, and a
// process whose files all have their stamps (none added, none gone) takes it from there: ~460
// stats. A file written within a timestamp tick of the hashing gets no stamp, so the next process
// hashes again. DISAGG_PARSE_CACHE=off reads and keeps nothing.
import { createHash } from 'node:crypto';
import { type Dirent, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../settings.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';
import { stampOf, statBeforeRead, unchangedSince, type FileStamp } from './file-stamp.ts';

const SOURCE_FOLDERS = ['framework', 'runners'];
const PACKAGE_FILES = ['package.json', 'package-lock.json'];
const FORMAT = 1;
const keptFile = path.join(packageRoot, 'node_modules', '.cache', 'disagg-bench', 'rules-version.json');

let version: string | undefined;

interface Kept {
  format: number;
  version: string;
  /** Each file's stamp, by its path under the package root. */
  stamps: Record<string, FileStamp>;
}

function sourcesUnder(dir: string, out: string[]): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(file, out);
    else if (entry.name.endsWith('.ts')) out.push(file);
  }
}

function readKept(): Kept | undefined {
  try {
    const kept = JSON.parse(readFileSync(keptFile, 'utf8')) as Kept;
    return kept.format === FORMAT && typeof kept.version === 'string' && kept.stamps ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** The kept version, if every file (the same set) is as it was when it was hashed. */
function keptVersion(files: string[]): string | undefined {
  const kept = readKept();
  if (!kept || Object.keys(kept.stamps).length !== files.length) return undefined;
  for (const file of files) {
    if (!unchangedSince(kept.stamps[path.relative(packageRoot, file)], statBeforeRead(file).stat)) return undefined;
  }
  return kept.version;
}

function keep(kept: Kept): void {
  try {
    mkdirSync(path.dirname(keptFile), { recursive: true });
    writeWholeSync(keptFile, JSON.stringify(kept));
  } catch {
    // only slower next time
  }
}

/** The rules' version: the same string for as long as no source file or package changes. */
export function rulesVersion(): string {
  if (version) return version;
  const files: string[] = [];
  for (const folder of SOURCE_FOLDERS) sourcesUnder(path.join(packageRoot, folder), files);
  files.sort();
  files.push(...PACKAGE_FILES.map((f) => path.join(packageRoot, f)));
  const useKept = process.env.DISAGG_PARSE_CACHE !== 'off';
  version = useKept ? keptVersion(files) : undefined;
  if (version) return version;
  const hash = createHash('sha1');
  const stamps: Record<string, FileStamp> = {};
  let allStamped = true;
  for (const file of files) {
    const rel = path.relative(packageRoot, file);
    hash.update(rel).update('\0');
    // The stat before the read: a write after it changes the stamp, or is too recent to get one.
    const { stat, atMs } = statBeforeRead(file);
    try {
      hash.update(readFileSync(file));
    } catch {
      hash.update('(unreadable)');
    }
    hash.update('\0');
    const stamp = stat && stampOf(stat, atMs);
    if (stamp) stamps[rel] = stamp;
    else allStamped = false;
  }
  version = hash.digest('hex').slice(0, 20);
  if (useKept && allStamped) keep({ format: FORMAT, version, stamps });
  return version;
}
