// The product speaks for itself: its README, docs, help texts, comments and example configs say
// what a thing is and why, never which tracker issue or design document asked for it. Scans every
// tracked text file outside test fixtures (upstream's own logs and files are kept as they are).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const TEXT = /\.(md|ts|mts|mjs|js|sh|yaml|yml|jsonc|txt)$/;
const FORBIDDEN: [string, RegExp][] = [
  ['a tracker issue number', /\b[Ii]ssues? #?\d+\b/],
  ['a seed document number', /\b[Ss]eeds? #?0\d\d\b/],
  ['the internal design document', /\bDESIGN\.md\b/],
];

const root = new URL('../..', import.meta.url).pathname;

function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files'], { encoding: 'utf8', cwd: root }).split('\n');
  return files.filter((f) => TEXT.test(f) && !f.startsWith('tests/fixtures/') && !f.startsWith('bench/results/') && f !== 'tests/common/speaks-for-itself.test.ts');
}

describe('no tracker, seed or design-document numbers in what the project ships and says', () => {
  it('finds none in any tracked text file', () => {
    const files = trackedTextFiles();
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      const lines = readFileSync(root + file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const [what, pattern] of FORBIDDEN) if (pattern.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found).toEqual([]);
  });
});
