// A cache of config files' parses and validation verdicts, so listing or planning thousands of
// unchanged configs neither parses nor validates them again (the parse is ~0.9 ms of the ~1.2 ms
// a config costs; validation, with its schema compiled first, most of the rest).
// One cache file per set of configs planned together (WORK_DIR and test type), holding only the
// files seen in the last plan, so it never grows past the configs in use. The parse is keyed by
// the file's content hash (mtimes alone are too coarse: two writes in the same few milliseconds
// share one); a file whose stamp (inode, size, mtime, ctime: file-stamp.ts) is the one taken when
// that content was read is not read again, and one written within 2 s of that read got no stamp,
// so it is read and hashed. The verdict (schema and rule issues, the GPU types named) is keyed also
// by the rules' version (rules-version.ts), so a changed schema or rule is never hidden. A verdict whose rules looked at
// files beside the config (relative paths) is not kept: those files may change on their own.
// Files that did not parse cleanly are not cached (their issues need the document's positions).
// Two JSON files under node_modules/.cache per set: an index (content hash, stamp and verdict of
// each file: what a listing needs) and the parsed data, read only when a test's config is first used
// (a run), so listing 10,000 configs reads ~2.8 MB instead of ~24 MB. Writers replace each file
// atomically; both carry the generation they were written in, and data from another generation is
// not trusted (the file is parsed again). A lost or corrupt cache only costs a re-parse.
// DISAGG_PARSE_CACHE=off reads and keeps nothing.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../runners/common/errors.ts';
import { writeWholeSync } from '../../runners/common/write-whole.ts';
import { packageRoot } from '../settings.ts';
import type { ConfigIssue } from './issue.ts';
import { decodeConfigBytes, parseYaml, readConfigBytes, type ParsedYaml } from './load.ts';
import { rulesVersion } from './rules-version.ts';
import { stampOf, statBeforeRead, unchangedSince, type FileStamp } from './file-stamp.ts';

/** What validating a parsed config found: its schema and rule issues, and the GPU types it names. */
export interface Verdict {
  issues: ConfigIssue[];
  supportedGpus?: string[];
}

interface IndexEntry {
  sha1: string;
  /** The file's stamp when content `sha1` was read, if it may be trusted for it (file-stamp.ts). */
  stamp?: FileStamp;
  /** The verdict, under the index's rules version. */
  verdict?: Verdict;
}

interface DataEntry {
  sha1: string;
  data: unknown;
}

export interface CachedParse extends ParsedYaml {
  /** The verdict of an earlier validation of this content under the same rules, if kept. */
  verdict?: Verdict;
}

/** Bump when what a parse produces changes shape (load.ts) or the entries do. */
const FORMAT = 8;
const cacheDir = path.join(packageRoot, 'node_modules', '.cache', 'disagg-bench', 'parsed-configs');
const off = () => process.env.DISAGG_PARSE_CACHE === 'off';

let indexFile: string | undefined;
let index: Map<string, IndexEntry> | undefined;
/** The generation of the index read (or undefined): data of another one is not trusted. */
let generation: string | undefined;
/** The parsed data, once a test's config was asked for (or a flush needs to write it). */
let data: Map<string, DataEntry> | undefined;
/** Data parsed in this process, not yet written. */
const fresh = new Map<string, DataEntry>();
/** Files read since the cache was opened: what the next flush keeps. */
const seen = new Set<string>();
let indexDirty = false;

/** The index file of one set of configs' cache (its data beside it, `.data.json`). */
export function parseCacheFile(scope: string): string {
  return path.join(cacheDir, `${createHash('sha1').update(scope).digest('hex').slice(0, 16)}.json`);
}

const dataFileOf = (file: string) => file.replace(/\.json$/, '.data.json');

/** Chooses the cache of one set of configs (call before reading them; planRun does). */
export function openParseCache(scope: string): void {
  const file = parseCacheFile(scope);
  if (file === indexFile) return;
  indexFile = file;
  index = undefined;
  generation = undefined;
  data = undefined;
  fresh.clear();
  seen.clear();
  indexDirty = false;
}

function readJson<T extends { format: number; generation: string; entries: Record<string, unknown> }>(file: string): T | undefined {
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as T;
    return stored.format === FORMAT && typeof stored.generation === 'string' && stored.entries ? stored : undefined;
  } catch {
    return undefined; // no cache yet, or an unreadable one
  }
}

function loadIndex(): Map<string, IndexEntry> {
  if (index) return index;
  index = new Map();
  if (!indexFile || off()) return index;
  const stored = readJson<{ format: number; generation: string; rules: string; entries: Record<string, IndexEntry> }>(indexFile);
  if (stored) {
    index = new Map(Object.entries(stored.entries));
    generation = stored.generation;
    // verdicts of other rules are stale: found again, and kept under these rules
    if (stored.rules !== rulesVersion()) {
      for (const entry of index.values()) delete entry.verdict;
    }
  }
  return index;
}

function loadData(): Map<string, DataEntry> {
  if (data) return data;
  data = new Map();
  if (indexFile && generation) {
    const stored = readJson<{ format: number; generation: string; entries: Record<string, DataEntry> }>(dataFileOf(indexFile));
    if (stored?.generation === generation) data = new Map(Object.entries(stored.entries));
  }
  for (const [file, entry] of fresh) data.set(file, entry);
  return data;
}

/** The cached data of a file planned with content `sha1`; parsed again where the data file lacks it. */
function dataOf(absFile: string, sha1: string, displayFile: string): unknown {
  const kept = loadData().get(absFile);
  if (kept?.sha1 === sha1) return kept.data;
  const text = textAsPlanned(absFile, sha1, displayFile);
  const entry = { sha1, data: parseYaml(text, displayFile).data };
  fresh.set(absFile, entry);
  data!.set(absFile, entry);
  return entry.data;
}

/** The file's text, read again, as it was planned (content hash `sha1`); an error if it changed since. */
function textAsPlanned(absFile: string, sha1: string, displayFile: string): string {
  const read = readConfigBytes(absFile, displayFile);
  const text = read.bytes && createHash('sha1').update(read.bytes).digest('hex') === sha1 ? decodeConfigBytes(read.bytes, displayFile).text : undefined;
  if (text === undefined) throw new InputError(`${displayFile}: changed since this run was planned (its checks were of the earlier content); start the run again`);
  return text;
}

/**
 * Like readYamlFileSync (load.ts), from the cache when the file's content was parsed before: then
 * the bytes are hashed, not decoded, or not even read where the file's stamp is unchanged (a
 * listing of unchanged files reads none).
 */
export function readYamlFileCached(absFile: string, displayFile: string): CachedParse {
  const cache = loadIndex();
  const known = cache.get(absFile);
  // The stat before the read: a write after it changes the stamp, or is too recent to get one.
  const { stat, atMs } = statBeforeRead(absFile);
  let bytes: Buffer | undefined;
  let sha1: string;
  if (known && unchangedSince(known.stamp, stat)) {
    sha1 = known.sha1;
  } else {
    const read = readConfigBytes(absFile, displayFile);
    if (read.issue) return { data: undefined, issues: [read.issue], locate: () => undefined };
    bytes = read.bytes;
    sha1 = createHash('sha1').update(bytes).digest('hex');
  }
  const stamp = bytes ? stat && stampOf(stat, atMs) : known?.stamp;
  seen.add(absFile);
  const hit = known;
  if (hit && hit.sha1 === sha1) {
    if (hit.stamp !== stamp) {
      if (stamp) hit.stamp = stamp;
      else delete hit.stamp;
      indexDirty = true;
    }
    let parsed: ParsedYaml | undefined;
    let value: { data: unknown } | undefined;
    // Positions are needed only to place a new issue (the verdict's are kept): the bytes are kept
    // for that only where the config is to be validated.
    const kept = hit.verdict ? undefined : bytes;
    const textNow = () => (kept ? decodeConfigBytes(kept, displayFile).text! : textAsPlanned(absFile, sha1, displayFile));
    return {
      // The data when first asked for (a run); positions only for an issue: parsed again then.
      get data() {
        return (value ??= { data: dataOf(absFile, sha1, displayFile) }).data;
      },
      issues: [],
      verdict: hit.verdict,
      locate: (p) => (parsed ??= parseYaml(textNow(), displayFile)).locate(p),
    };
  }
  const decoded = decodeConfigBytes(bytes!, displayFile);
  if (decoded.issue) return { data: undefined, issues: [decoded.issue], locate: () => undefined };
  const parsed = parseYaml(decoded.text, displayFile);
  if (parsed.issues.length === 0 && !off() && survivesJson(parsed.data)) {
    cache.set(absFile, { sha1, ...(stamp ? { stamp } : {}) });
    const entry = { sha1, data: parsed.data };
    fresh.set(absFile, entry);
    data?.set(absFile, entry);
    indexDirty = true;
  }
  return parsed;
}

/** Keeps the verdict of a file read by readYamlFileCached in this plan (only where its parse is kept). */
export function keepVerdict(absFile: string, verdict: Verdict): void {
  const entry = index?.get(absFile);
  if (!entry || !seen.has(absFile)) return;
  entry.verdict = { issues: verdict.issues, ...(verdict.supportedGpus ? { supportedGpus: verdict.supportedGpus } : {}) };
  indexDirty = true;
}

/**
 * JSON turns NaN and Infinity (`.nan`, `1.0e+309`) into null and a date (`2002-12-14`) into text:
 * such data is not cached. Nor is data JSON cannot hold at all (the loader refuses recursive
 * aliases; this only keeps a cache from ever taking the run down).
 */
function survivesJson(value: unknown): boolean {
  let ok = true;
  try {
    JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
      if ((typeof v === 'number' && !Number.isFinite(v)) || this[key] instanceof Date) ok = false;
      return v;
    });
  } catch {
    return false;
  }
  return ok;
}

/**
 * Writes what changed (temporary files renamed over the old ones): the data only when new files
 * were parsed, in a new generation, then the index. Files not seen in this plan are dropped.
 */
export function flushParseCache(): void {
  if (!index || !indexFile || off()) return;
  for (const file of index.keys()) {
    if (!seen.has(file)) {
      index.delete(file);
      indexDirty = true;
    }
  }
  try {
    mkdirSync(cacheDir, { recursive: true });
    if (fresh.size > 0) {
      const all = loadData();
      for (const file of all.keys()) if (!index.has(file)) all.delete(file);
      // an index entry whose data is lost (a data file of another generation) is parsed anew next time
      for (const file of index.keys()) if (!all.has(file)) index.delete(file);
      generation = randomBytes(8).toString('hex');
      writeWholeSync(dataFileOf(indexFile), JSON.stringify({ format: FORMAT, generation, entries: Object.fromEntries(all) }));
      fresh.clear();
      indexDirty = true;
    }
    if (!indexDirty) return;
    indexDirty = false;
    writeWholeSync(indexFile, JSON.stringify({ format: FORMAT, generation: generation ?? randomBytes(8).toString('hex'), rules: rulesVersion(), entries: Object.fromEntries(index) }));
  } catch {
    // A cache that cannot be written is only slower next time.
  }
}
