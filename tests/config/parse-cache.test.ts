import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { flushParseCache, keepVerdict, openParseCache, parseCacheFile, readYamlFileCached } from '../../framework/config/parse-cache.ts';
import { rulesVersion } from '../../framework/config/rules-version.ts';
import { RACY_MARGIN_MS } from '../../framework/config/file-stamp.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'parse-cache-'));
const file = path.join(dir, 'c.yaml');

describe('parse cache', () => {
  it('returns the new content at once when a file changes, even within one mtime tick', () => {
    openParseCache(`test:${dir}`);
    writeFileSync(file, 'a: 1\nb: 2\n');
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 1, b: 2 });
    writeFileSync(file, 'a: 7\nb: 2\n'); // same size, written immediately
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 7, b: 2 });
    flushParseCache();
  });

  it('serves a cached parse whose positions are still found for an issue', () => {
    openParseCache(`test2:${dir}`);
    writeFileSync(file, 'top:\n  inner: 3\n');
    readYamlFileCached(file, 'c.yaml');
    flushParseCache();
    openParseCache(`other:${dir}`); // forget the in-memory copy, then reopen: read from disk
    openParseCache(`test2:${dir}`);
    const cached = readYamlFileCached(file, 'c.yaml');
    expect(cached.data).toEqual({ top: { inner: 3 } });
    expect(cached.locate(['top', 'inner'])).toEqual({ line: 2, col: 3 });
  });

  it('never caches what JSON would change (NaN, Infinity) nor files with parse errors', () => {
    openParseCache(`test3:${dir}`);
    writeFileSync(file, 'x: .nan\ny: 1.0e+309\n');
    const first = readYamlFileCached(file, 'c.yaml').data as { x: number; y: number };
    expect(Number.isNaN(first.x)).toBe(true);
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ x: NaN, y: Infinity });
    writeFileSync(file, 'a: 1\na: 2\n');
    expect(readYamlFileCached(file, 'c.yaml').issues[0].message).toMatch(/^duplicate key 'a'/);
    expect(readYamlFileCached(file, 'c.yaml').issues).toHaveLength(1);
  });
});

describe('validation verdicts in the cache', () => {
  const verdict = { issues: [{ file: 'c.yaml', line: 2, col: 3, path: 'top.inner', message: 'expected string, got number 3' }], supportedGpus: ['GB200'] };

  it('a kept verdict is served for the same content, from disk, and dropped when the content changes', () => {
    openParseCache(`verdict:${dir}`);
    writeFileSync(file, 'top:\n  inner: 3\n');
    expect(readYamlFileCached(file, 'c.yaml').verdict).toBeUndefined();
    keepVerdict(file, verdict);
    flushParseCache();
    openParseCache(`other:${dir}`);
    openParseCache(`verdict:${dir}`);
    expect(readYamlFileCached(file, 'c.yaml').verdict).toEqual(verdict);
    writeFileSync(file, 'top:\n  inner: 4\n');
    expect(readYamlFileCached(file, 'c.yaml').verdict).toBeUndefined();
  });

  it('a verdict the rules of another version gave is not served', () => {
    const scope = `rules:${dir}`;
    openParseCache(scope);
    writeFileSync(file, 'a: 1\n');
    readYamlFileCached(file, 'c.yaml');
    keepVerdict(file, verdict);
    flushParseCache();
    const stored = JSON.parse(readFileSync(parseCacheFile(scope), 'utf8'));
    expect(stored.rules).toBe(rulesVersion());
    expect(stored.entries[file].verdict).toEqual(verdict);
    stored.rules = 'an older version';
    writeFileSync(parseCacheFile(scope), JSON.stringify(stored));
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 1 });
    expect(readYamlFileCached(file, 'c.yaml').verdict).toBeUndefined();
  });
});

describe('the parsed data, read when first asked for', () => {
  it('is parsed again when the data file is lost, and refused when the file changed since it was planned', () => {
    const scope = `data:${dir}`;
    openParseCache(scope);
    writeFileSync(file, 'a: 1\n');
    readYamlFileCached(file, 'c.yaml');
    flushParseCache();
    rmSync(parseCacheFile(scope).replace(/\.json$/, '.data.json'));
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    expect(readYamlFileCached(file, 'c.yaml').data).toEqual({ a: 1 });
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    const planned = readYamlFileCached(file, 'c.yaml');
    writeFileSync(file, 'a: 2\n');
    expect(() => planned.data).toThrow(/^c\.yaml: changed since this run was planned/);
  });
});

describe('file stamps in the cache', () => {
  const verdict = { issues: [], supportedGpus: ['H100'] };
  const storedEntry = (scope: string) => JSON.parse(readFileSync(parseCacheFile(scope), 'utf8')).entries[file] as { sha1: string; stamp?: string };

  it('a file written just now gets no stamp: rewritten within the same second at the same size, it is read again and validated anew', () => {
    const scope = `racy:${dir}`;
    openParseCache(scope);
    writeFileSync(file, 'gpu: H100\n');
    readYamlFileCached(file, 'c.yaml');
    keepVerdict(file, verdict);
    flushParseCache();
    expect(storedEntry(scope).stamp).toBeUndefined();
    writeFileSync(file, 'gpu: B200\n'); // same size, same second
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    const again = readYamlFileCached(file, 'c.yaml');
    expect(again.verdict).toBeUndefined();
    expect(again.data).toEqual({ gpu: 'B200' });
  });

  it('an unchanged file older than the margin is stamped and then not read again; a write that restores its mtime still makes it read', async () => {
    const scope = `stamped:${dir}`;
    writeFileSync(file, 'gpu: H100\n');
    await new Promise((resolve) => setTimeout(resolve, RACY_MARGIN_MS + 100)); // the write's times out of the margin
    openParseCache(scope);
    readYamlFileCached(file, 'c.yaml');
    keepVerdict(file, verdict);
    flushParseCache();
    const entry = storedEntry(scope);
    expect(entry.stamp).toBeDefined();
    // Trusted: an index entry whose content hash no longer matches the bytes is still served (the file is not read).
    const stored = JSON.parse(readFileSync(parseCacheFile(scope), 'utf8'));
    stored.entries[file] = { ...entry, sha1: 'not the hash of the bytes', verdict: { issues: [], supportedGpus: ['from the stamp'] } };
    writeFileSync(parseCacheFile(scope), JSON.stringify(stored));
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    expect(readYamlFileCached(file, 'c.yaml').verdict).toEqual({ issues: [], supportedGpus: ['from the stamp'] });
    // Same size, and the old mtime put back (cp -p, touch -d): the change time differs, so it is read.
    const { atime, mtime } = statSync(file);
    writeFileSync(file, 'gpu: B200\n');
    utimesSync(file, atime, mtime);
    openParseCache(`other:${dir}`);
    openParseCache(scope);
    const changed = readYamlFileCached(file, 'c.yaml');
    expect(changed.verdict).toBeUndefined();
    expect(changed.data).toEqual({ gpu: 'B200' });
  });
});
