// The version of the validation rules, for the config cache (parse-cache.ts): a hash of every
// source file validation may run (the framework's and the runners' TypeScript: the test types'
// schemas and rules import from both) and of the installed packages (package-lock.json: ajv's and
// yaml's versions). Any edit to them makes every cached verdict stale at once, so a changed schema
// or rule is never hidden behind a cached result. Hashing the ~400 files costs ~10 ms, once per process.
import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../settings.ts';

const SOURCE_FOLDERS = ['framework', 'runners'];
const PACKAGE_FILES = ['package.json', 'package-lock.json'];

let version: string | undefined;

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

/** The rules' version: the same string for as long as no source file or package changes. */
export function rulesVersion(): string {
  if (version) return version;
  const files: string[] = [];
  for (const folder of SOURCE_FOLDERS) sourcesUnder(path.join(packageRoot, folder), files);
  files.sort();
  const hash = createHash('sha1');
  for (const file of [...files, ...PACKAGE_FILES.map((f) => path.join(packageRoot, f))]) {
    hash.update(path.relative(packageRoot, file)).update('\0');
    try {
      hash.update(readFileSync(file));
    } catch {
      hash.update('(unreadable)');
    }
    hash.update('\0');
  }
  version = hash.digest('hex').slice(0, 20);
  return version;
}
