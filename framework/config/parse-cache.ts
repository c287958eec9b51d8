// A cache of parsed config files, so listing or planning a thousand unchanged configs does not
// parse a thousand YAML files again (the parse is ~0.9 ms of the ~1.2 ms a config costs).
// One cache file per set of configs planned together (WORK_DIR and test type), holding only the
// files seen in the last plan, so it never grows past the configs in use. Only the parse is cached, keyed by the file's content hash (mtimes are too coarse: two writes in
// the same few milliseconds share one): validation and rules always run, so a
// changed schema or rule is never hidden. Files that did not parse cleanly are not cached (their
// issues need the document's positions). The cache is one JSON file under node_modules/.cache;
// writers replace it atomically, and a lost or corrupt cache only costs a re-parse.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../settings.ts';
import { parseYaml, readConfigText, type ParsedYaml } from './load.ts';

interface Entry {
  sha1: string;
  data: unknown;
}

/** Bump when what a parse produces changes shape (load.ts). */
const FORMAT = 4;
const cacheDir = path.join(packageRoot, 'node_modules', '.cache', 'disagg-bench', 'parsed-configs');

let cacheFile: string | undefined;
let entries: Map<string, Entry> | undefined;
/** Files read since the cache was opened: what the next flush keeps. */
const seen = new Set<string>();
let dirty = false;

/** Chooses the cache of one set of configs (call before reading them; planRun does). */
export function openParseCache(scope: string): void {
  const file = path.join(cacheDir, `${createHash('sha1').update(scope).digest('hex').slice(0, 16)}.json`);
  if (file === cacheFile) return;
  cacheFile = file;
  entries = undefined;
  seen.clear();
  dirty = false;
}

function load(): Map<string, Entry> {
  if (entries) return entries;
  entries = new Map();
  if (!cacheFile) return entries;
  if (process.env.DISAGG_PARSE_CACHE === 'off') return entries;
  try {
    const stored = JSON.parse(readFileSync(cacheFile, 'utf8')) as { format: number; entries: Record<string, Entry> };
    if (stored.format === FORMAT) entries = new Map(Object.entries(stored.entries));
  } catch {
    // No cache yet, or an unreadable one: start empty.
  }
  return entries;
}

/** Like readYamlFileSync (load.ts), from the cache when the file's content was parsed before. */
export function readYamlFileCached(absFile: string, displayFile: string): ParsedYaml {
  const cache = load();
  const read = readConfigText(absFile, displayFile);
  if (read.issue) return { data: undefined, issues: [read.issue], locate: () => undefined };
  const { text } = read;
  const sha1 = createHash('sha1').update(text).digest('hex');
  seen.add(absFile);
  const hit = cache.get(absFile);
  if (hit && hit.sha1 === sha1) {
    let parsed: ParsedYaml | undefined;
    // Positions are only needed for an issue: the document is parsed again then, not before.
    return { data: hit.data, issues: [], locate: (p) => (parsed ??= parseYaml(text, displayFile)).locate(p) };
  }
  const parsed = parseYaml(text, displayFile);
  if (parsed.issues.length === 0 && process.env.DISAGG_PARSE_CACHE !== 'off' && survivesJson(parsed.data)) {
    cache.set(absFile, { sha1, data: parsed.data });
    dirty = true;
  }
  return parsed;
}

/**
 * JSON turns NaN and Infinity (`.nan`, `1.0e+309`) into null and a date (`2002-12-14`) into text:
 * such data is not cached. Nor is data JSON cannot hold at all (the loader refuses recursive
 * aliases; this only keeps a cache from ever taking the run down).
 */
function survivesJson(data: unknown): boolean {
  let ok = true;
  try {
    JSON.stringify(data, function (this: Record<string, unknown>, key: string, value: unknown) {
      if ((typeof value === 'number' && !Number.isFinite(value)) || this[key] instanceof Date) ok = false;
      return value;
    });
  } catch {
    return false;
  }
  return ok;
}

/** Writes the cache if anything was added (a temporary file renamed over it). */
export function flushParseCache(): void {
  if (!entries || !cacheFile) return;
  for (const file of entries.keys()) {
    if (!seen.has(file)) {
      entries.delete(file);
      dirty = true;
    }
  }
  if (!dirty) return;
  dirty = false;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ format: FORMAT, entries: Object.fromEntries(entries) }));
    renameSync(temporary, cacheFile);
  } catch {
    // A cache that cannot be written is only slower next time.
  }
}
