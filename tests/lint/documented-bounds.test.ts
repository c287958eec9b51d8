// The size bounds the docs state are the code's: every "config above N KiB/MiB" (and "more than
// the N a config may be") in the README and docs/ names READ_LIMITS.config, and the matrix bound
// READ_LIMITS.matrix, so a reader is never told a limit the code does not keep.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { READ_LIMITS } from '../../runners/common/read-file.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const docs = ['README.md', ...readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const size = (bytes: number) => (bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`);

describe('documented bounds', () => {
  it('every stated config size bound is READ_LIMITS.config', () => {
    const stated = docs.flatMap((file) =>
      [...readFileSync(path.join(repo, file), 'utf8').replace(/\s+/g, ' ').matchAll(/(?:config above|the|configs) (\d+ [KM]iB)(?: a config may be| is refused|,)/g)]
        .filter((m) => /config/.test(m[0]))
        .map((m) => `${file}: ${m[1]}`),
    );
    expect(stated.length).toBeGreaterThan(0);
    for (const line of stated) expect(line).toMatch(new RegExp(`: ${size(READ_LIMITS.config)}$`));
  });
});
