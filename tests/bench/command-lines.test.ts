// Every command under bench/ reads its command line through bench/lib/options.ts, so that each
// answers --help (exit 0, before anything is measured) and refuses an option it does not have or
// a value it cannot use in one line with its usage (exit 2), never with node's stack trace; and
// each keeps its usage in one place, its USAGE constant, which its header comment points to.
// Read from the sources (running every script would cost a minute of the suite): the commands are
// the .ts files of bench/, bench/nixl/ and bench/gpu/ that no other file under bench/ imports, so a
// new script is held to this as soon as it is added. tests/bench/help.test.ts runs a few.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const COMMAND_DIRS = ['bench', 'bench/nixl', 'bench/gpu'];
const OPTIONS = 'bench/lib/options.ts';

const tsFiles = (dir: string): string[] => readdirSync(path.join(repo, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`);
const allBenchFiles = (dir = 'bench'): string[] =>
  readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? allBenchFiles(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
  );
const source = (file: string) => readFileSync(path.join(repo, file), 'utf8');

/** The repository paths `file` imports by a relative path. */
function relativeImports(file: string, text: string): string[] {
  return [...text.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1])));
}

/** The commands: scripts of the command folders that no file under bench/ imports. */
function commandScripts(): string[] {
  const imported = new Set(allBenchFiles().flatMap((file) => relativeImports(file, source(file))));
  return COMMAND_DIRS.flatMap(tsFiles).filter((file) => !imported.has(file));
}

/** What is wrong with how the script `file` (its text `text`) reads its command line; empty when nothing. */
function commandLineProblems(file: string, text: string): string[] {
  const problems: string[] = [];
  const name = path.basename(file, '.ts');
  if (!relativeImports(file, text).includes(OPTIONS) || !/\bbench(Options|Subcommand)\(/.test(text)) problems.push(`does not read its command line with ${OPTIONS} (benchOptions or benchSubcommand)`);
  if (/import\s*\{[^}]*\bparseArgs\b[^}]*\}\s*from\s*['"](node:)?util['"]/.test(text)) problems.push("imports parseArgs from node:util (an unknown option would end in node's stack trace)");
  if (/\bprocess\.argv\b/.test(text)) problems.push(`reads process.argv itself (${OPTIONS} reads it)`);
  if (/\bthrow\s+new\s+\w*Error\(\s*[`'"]--/.test(text)) problems.push(`throws on an option's value (a stack trace; ${OPTIONS}'s readers refuse it in one line)`);
  const usage = /^const USAGE = `usage: ((?:[^`\\]|\\.)*)`;$/m.exec(text)?.[1];
  if (usage === undefined) problems.push('has no `const USAGE = `usage: ...`` (what --help prints)');
  else if (!new RegExp(`\\b${name}\\.(ts|mjs)\\b`).test(usage)) problems.push(`its USAGE does not name ${name}.ts (or its bundle ${name}.mjs)`);
  const header = /^(?:\/\/.*\n)+/.exec(text)?.[0] ?? '';
  if (!/USAGE below/.test(header)) problems.push('its header comment does not point to USAGE ("Command line: USAGE below")');
  if (new RegExp(`^//\\s+(node|npx)\\s.*\\b${name}\\.(ts|mjs)\\b`, 'm').test(header)) problems.push('its header comment spells the command line out again beside USAGE (the two drift)');
  return problems;
}

describe('bench/ command lines', () => {
  const scripts = commandScripts();

  it('finds the commands and leaves out the modules other scripts import', () => {
    expect(scripts).toContain('bench/orchestration.ts');
    expect(scripts).toContain('bench/nixl/side-by-side.ts');
    expect(scripts).toContain('bench/gpu/engine-limits.ts');
    expect(scripts).not.toContain('bench/nixl/side-runs.ts');
    expect(scripts).not.toContain('bench/gpu/peer-copy-limits.ts');
    expect(scripts).not.toContain('bench/hostile-shapes.ts');
    expect(scripts.some((s) => s.startsWith('bench/lib/') || s.startsWith('bench/fixtures/'))).toBe(false);
  });

  it.each(scripts)('%s reads its command line through bench/lib/options.ts, its usage in one place', (file) => {
    expect(commandLineProblems(file, source(file))).toEqual([]);
  });

  it('tells each way a script can get around it', () => {
    const file = 'bench/example.ts';
    const good = [
      '// What it measures.',
      '// Command line: USAGE below (--help prints it).',
      "import { benchOptions } from './lib/options.ts';",
      '',
      'const USAGE = `usage: node --import tsx bench/example.ts [--runs 3]`;',
      "const cli = benchOptions({ options: { runs: { type: 'string', default: '3' } } }, USAGE);",
    ].join('\n');
    expect(commandLineProblems(file, good)).toEqual([]);
    const broken: [string, string, RegExp][] = [
      ["import { benchOptions } from './lib/options.ts';", "import { parseArgs } from 'node:util';", /does not read its command line/],
      ['// Command line: USAGE below (--help prints it).', "// What it measures.\n// Command line: USAGE below.\nimport { parseArgs, inspect } from 'node:util';", /imports parseArgs/],
      ['const cli = benchOptions(', "const x = process.argv[2];\nconst cli = benchOptions(", /reads process\.argv/],
      ['const cli = benchOptions(', "if (bad) throw new Error(`--order ${o}: expected a or b`);\nconst cli = benchOptions(", /throws on an option's value/],
      ['bench/example.ts [--runs 3]', 'bench/other.ts [--runs 3]', /does not name example\.ts/],
      ['const USAGE = `usage: ', 'const HELP = `usage: ', /has no `const USAGE/],
      ['// Command line: USAGE below (--help prints it).', '//   node --import tsx bench/example.ts [--runs 3]', /does not point to USAGE/],
      ['// What it measures.', '// What it measures.\n//   node --import tsx bench/example.ts [--runs 5]', /spells the command line out again/],
    ];
    for (const [from, to, problem] of broken) {
      expect(good).toContain(from);
      expect(commandLineProblems(file, good.replace(from, to)).join('\n')).toMatch(problem);
    }
  });
});
