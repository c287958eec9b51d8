// The layer table of docs/architecture.md as Biome's restricted imports, so that `npm run lint`
// fails on an upward import (scheduler -> jobs) the moment it is written. biome.jsonc extends the
// file this writes, biome.boundaries.jsonc; tests/types/module-boundaries.test.ts fails when the
// file and the table disagree, and keeps what a linter cannot see (`import type` into a
// types-only layer, computed imports, runners importing runners).
//
//   node --import tsx scripts/lint-boundaries.ts          rewrite biome.boundaries.jsonc from the table
//   node --import tsx scripts/lint-boundaries.ts --check  exit 1 when it is not what the table says
//
// One override per source folder (per file at framework/'s top, whose files are of several
// layers), forbidding, as the relative paths that folder's imports would use, every layer its row
// neither names nor allows as types: Biome matches an import's text, not the file it resolves to.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { architecture, layerOf, repoRoot, type Layer, type LayerException } from './layer-table.ts';

export const BOUNDARIES_FILE = 'biome.boundaries.jsonc';

interface Override {
  includes: string[];
  linter: { rules: { style: { noRestrictedImports: { level: 'error'; options: { patterns: Array<{ group: string[]; message: string }> } } } } };
}

const posix = (p: string) => p.split(path.sep).join('/');

/** Every folder under `dir` holding a .ts file, with its .ts files (repo-relative). */
function sourceFolders(dir: string): Array<{ folder: string; files: string[] }> {
  const entries = readdirSync(path.join(repoRoot, dir), { withFileTypes: true });
  const files = entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => `${dir}/${e.name}`);
  const below = entries.filter((e) => e.isDirectory()).flatMap((e) => sourceFolders(`${dir}/${e.name}`));
  return [...(files.length > 0 ? [{ folder: dir, files }] : []), ...below];
}

/** What a file of `layer` may not import at all (types-only layers stay with the import test). */
function forbidden(layers: readonly Layer[], layer: Layer): Layer[] {
  return layers.filter((l) => l !== layer && !layer.mayImport.has(l.name) && !layer.typesOnly.has(l.name));
}

/** The import text that reaches `target` (a folder ending in `/`, or a file) from files in `folder`. */
function importPattern(folder: string, target: string): string {
  const relative = posix(path.relative(folder, target.replace(/\/$/, '')));
  const spelled = relative.startsWith('.') ? relative : `./${relative}`;
  return target.endsWith('/') ? `${spelled}/**` : spelled;
}

function override(includes: string[], folder: string, layer: Layer, layers: readonly Layer[], allowed: string[]): Override {
  const group = forbidden(layers, layer).flatMap((l) => l.paths.map((p) => importPattern(folder, p)));
  const message = `the ${layer.name} layer imports ${[...layer.mayImport].join(', ') || 'nothing'} only${layer.typesOnly.size > 0 ? ` (types only: ${[...layer.typesOnly].join(', ')})` : ''}: docs/architecture.md, "The layers"`;
  return {
    includes,
    linter: { rules: { style: { noRestrictedImports: { level: 'error', options: { patterns: [{ group: [...group, ...allowed.map((a) => `!${a}`)], message }] } } } } },
  };
}

/** The overrides the table and its exceptions make, for the tree as it is. */
export function boundaryOverrides(layers: readonly Layer[], exceptions: readonly LayerException[]): Override[] {
  const overrides: Override[] = [];
  for (const { folder, files } of [...sourceFolders('framework'), ...sourceFolders('runners')]) {
    // Files of one folder share a layer, but for framework/'s own files (cli.ts, settings.ts...).
    const byLayer = new Map<Layer, string[]>();
    for (const file of files) {
      const layer = layerOf(layers, file);
      if (!layer) continue; // the import test names a file without a layer
      byLayer.set(layer, [...(byLayer.get(layer) ?? []), file]);
    }
    for (const [layer, own] of byLayer) {
      const whole = own.length === files.length;
      const exceptional = own.filter((f) => exceptions.some((x) => x.from === f));
      // The folder's rule, then each exception's file after it: a later override wins for its files.
      const plain = whole ? [`${folder}/*.ts`] : own.filter((f) => !exceptional.includes(f));
      if (forbidden(layers, layer).length === 0) continue; // the entry layer may import every other
      if (plain.length > 0) overrides.push(override(plain, folder, layer, layers, []));
      for (const file of exceptional) {
        const allowed = exceptions.filter((x) => x.from === file).map((x) => importPattern(folder, x.to));
        overrides.push(override([file], folder, layer, layers, allowed));
      }
    }
  }
  return overrides;
}

export function boundariesFileText(): string {
  const { layers, exceptions } = architecture();
  const note = 'Written by scripts/lint-boundaries.ts from the layer table of docs/architecture.md: edit the table, then run the script.';
  const lines = boundaryOverrides(layers, exceptions).map((o) => `    ${JSON.stringify(o)}`);
  return `// ${note}\n{\n  "overrides": [\n${lines.join(',\n')}\n  ]\n}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(repoRoot, 'scripts/lint-boundaries.ts')) {
  const file = path.join(repoRoot, BOUNDARIES_FILE);
  const text = boundariesFileText();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(file, 'utf8');
    } catch {}
    if (current !== text) {
      console.error(`${BOUNDARIES_FILE} is not what docs/architecture.md's layer table says: run node --import tsx scripts/lint-boundaries.ts`);
      process.exit(1);
    }
  } else {
    writeFileSync(file, text);
  }
}
