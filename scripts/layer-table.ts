// The layer table of docs/architecture.md, read once for the two checks of it: the linter's
// restricted imports (scripts/lint-boundaries.ts writes them) and the import test
// (tests/types/module-boundaries.test.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Layer {
  name: string;
  /** Repo-relative folders (ending in `/`) and files of the layer. */
  paths: string[];
  mayImport: Set<string>;
  /** Layers it may import only with `import type` (erased when the code runs). */
  typesOnly: Set<string>;
}

export interface LayerException {
  from: string;
  to: string;
}

export const repoRoot = path.resolve(import.meta.dirname, '..');

/** Rows of the markdown table whose header row starts with `| <firstHeader> |`, in the section after `heading`. */
export function tableRows(markdown: string, heading: string, firstHeader: string): string[][] {
  const section = markdown.slice(markdown.indexOf(heading));
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  if (start < 0) throw new Error(`no table "| ${firstHeader} |" after "${heading}"`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split('|').map((c) => c.trim()));
  }
  return rows;
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const names = (list: string) => list.split(',').map((s) => s.trim()).filter(Boolean);

export function parseLayers(markdown: string, heading: string): Layer[] {
  return tableRows(markdown, heading, 'Layer').map(([name, folders, , may]) => {
    const [plain, typesPart] = may.split(';');
    return {
      name,
      paths: backticked(folders),
      mayImport: new Set(names(plain ?? '')),
      typesOnly: new Set(typesPart ? names(typesPart.replace(/^\s*types only:/, '')) : []),
    };
  });
}

export function parseExceptions(markdown: string): LayerException[] {
  return tableRows(markdown, '### Exceptions', 'From').map(([from, to]) => ({ from: backticked(from)[0], to: backticked(to)[0] }));
}

export function architecture(): { layers: Layer[]; exceptions: LayerException[]; markdown: string } {
  const markdown = readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8');
  return { layers: parseLayers(markdown, '## The layers'), exceptions: parseExceptions(markdown), markdown };
}

/** The layer of a repo-relative file: the row naming the file itself, else the longest folder that holds it. */
export function layerOf(layers: readonly Layer[], file: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const p of layer.paths) {
      const holds = p.endsWith('/') ? file.startsWith(p) : file === p;
      const length = p.endsWith('/') ? p.length : Number.POSITIVE_INFINITY;
      if (holds && (!best || length > best.length)) best = { layer, length };
    }
  }
  return best?.layer;
}
