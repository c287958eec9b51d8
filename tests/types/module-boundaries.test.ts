// The project's boundaries, checked on the imports of every source file. The layers, what each may
// import and the few exceptions are the tables of docs/architecture.md, read from there (the README's
// architecture section carries the same layer table): every file under framework/ and runners/ has a
// layer, every relative import goes to its own layer or one its row names, a new folder has no layer
// until a row names it. Beside the tables: no runner imports another runner, a test type imports
// only its own runners, and product code (framework/, runners/, bin/, vitest.config.ts) imports
// nothing from tests/ or bench/ and no path it computes. Imports are read with the TypeScript
// compiler, in every form (see importSpecifiers); the last test shows each form caught.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { architecture, layerOf as layerOfTable, parseLayers } from '../../scripts/layer-table.ts';
import { BOUNDARIES_FILE, boundariesFileText } from '../../scripts/lint-boundaries.ts';

const root = path.resolve(import.meta.dirname, '../..');

const { layers, exceptions } = architecture();

interface Edge {
  file: string;
  target: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/**
 * Every import of a source text, read with the TypeScript compiler (never a regular expression):
 * `import`/`export ... from` (type-only marked: `import type`, or braces whose every name is
 * `type X`), side-effect imports, `import x = require()`, `import()`, `require()` and the
 * functions `createRequire()` returns. A specifier the code computes (a template with
 * substitutions, a variable) is returned with `computed` set: no one can check where it goes.
 */
function importSpecifiers(fileName: string, text: string): Array<{ spec: string; typeOnly: boolean; computed?: boolean }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Array<{ spec: string; typeOnly: boolean; computed?: boolean }> = [];
  const requires = new Set<string>(['require']);
  const literal = (node: ts.Node | undefined) =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
  const fromArgument = (arg: ts.Expression | undefined) => {
    const spec = literal(arg);
    found.push(spec !== undefined ? { spec, typeOnly: false } : { spec: arg ? arg.getText(source) : '', typeOnly: false, computed: true });
  };
  const allTypes = (elements: ts.NodeArray<ts.ImportSpecifier | ts.ExportSpecifier> | undefined) =>
    elements !== undefined && elements.length > 0 && elements.every((e) => e.isTypeOnly);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly = Boolean(clause?.isTypeOnly) || (clause !== undefined && !clause.name && bindings !== undefined && ts.isNamedImports(bindings) && allTypes(bindings.elements));
      found.push({ spec: literal(node.moduleSpecifier)!, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const typeOnly = node.isTypeOnly || (node.exportClause !== undefined && ts.isNamedExports(node.exportClause) && allTypes(node.exportClause.elements));
      found.push({ spec: literal(node.moduleSpecifier)!, typeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      fromArgument(node.moduleReference.expression);
    } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && ts.isCallExpression(node.initializer) && node.initializer.expression.getText(source) === 'createRequire') {
      requires.add(node.name.text);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword) fromArgument(node.arguments[0]);
      else if (ts.isIdentifier(callee) && requires.has(callee.text)) fromArgument(node.arguments[0]);
      else if (ts.isCallExpression(callee) && callee.expression.getText(source) === 'createRequire') fromArgument(node.arguments[0]); // createRequire(url)('./x')
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A computed specifier: where it goes cannot be checked. */
const COMPUTED = '<computed>';
/** The computed imports that must be: the file, and why. */
const COMPUTED_ALLOWED: Record<string, string> = {
  'bin/disagg-bench.js': 'loads the CLI bundle it has just built or found, a path known only at run time',
  'framework/config/extensions.ts': 'loads the extension modules WORK_DIR/disagg-bench.yaml names, paths known only at run time',
};

/** Repo-relative targets of a file's imports that name a file of this repository (relative specifiers). */
function importsOf(file: string, text = readFileSync(path.join(root, file), 'utf8')): Edge[] {
  return importSpecifiers(file, text).flatMap(({ spec, typeOnly, computed }) => {
    if (computed) return [{ file, target: `${COMPUTED} ${spec}`, typeOnly }];
    if (!spec.startsWith('.')) return []; // a package or node: module
    const target = path.relative(root, path.resolve(path.dirname(path.join(root, file)), spec)).split(path.sep).join('/');
    return [{ file, target, typeOnly }];
  });
}

/** What product code may never import: the project's own tests and benchmarks. */
const NOT_PRODUCT = ['tests/', 'bench/'];

/** Imports that break a rule beside the layer table: into tests/ or bench/, or computed. */
function outsideProduct(e: Edge): string | undefined {
  if (e.target.startsWith(COMPUTED)) return COMPUTED_ALLOWED[e.file] ? undefined : `${show(e)}: a computed import (write the path as a string literal)`;
  const into = NOT_PRODUCT.find((p) => e.target.startsWith(p));
  return into ? `${show(e)}: product code imports ${into}` : undefined;
}

const layerOf = (file: string) => layerOfTable(layers, file);

const show = (e: Pick<Edge, 'file' | 'target'>) => `${e.file} -> ${e.target}`;
const files = [...sourceFiles('framework'), ...sourceFiles('runners')];
const edges = files.flatMap((file) => importsOf(file));
/** The product beside framework/ and runners/: the CLI's entry and the config users run Vitest with. */
const productEntries = ['bin/disagg-bench.js', 'vitest.config.ts'];
const isException = (e: Edge) => exceptions.some((x) => x.from === e.file && x.to === e.target);

/** Whether an import breaks the layer table (the exceptions aside). */
function breaksLayers(e: Edge): boolean {
  const from = layerOf(e.file);
  const to = layerOf(e.target);
  if (!from || !to || from === to) return false;
  if (from.mayImport.has(to.name)) return false;
  return !(e.typeOnly && from.typesOnly.has(to.name));
}

describe('module boundaries: the layer table of docs/architecture.md', () => {
  it('is read from the doc, and the README carries the same table', () => {
    expect(layers.map((l) => l.name)).toEqual(expect.arrayContaining(['entry', 'suite', 'jobs', 'scheduler', 'config', 'common', 'engine']));
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const readmeLayers = parseLayers(readme, '## Architecture').map((l) => ({ ...l, mayImport: [...l.mayImport], typesOnly: [...l.typesOnly] }));
    expect(readmeLayers).toEqual(layers.map((l) => ({ ...l, mayImport: [...l.mayImport], typesOnly: [...l.typesOnly] })));
  });

  it('names only layers it has, and its "may import" goes one way (no cycle)', () => {
    const known = new Set(layers.map((l) => l.name));
    const unknown = layers.flatMap((l) => [...l.mayImport, ...l.typesOnly].filter((n) => !known.has(n)).map((n) => `${l.name} -> ${n}`));
    expect(unknown).toEqual([]);
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
      const layer = layers.find((l) => l.name === from)!;
      return [...layer.mayImport, ...layer.typesOnly].some((n) => n === to || (!seen.has(n) && (seen.add(n), reaches(n, to, seen))));
    };
    expect(layers.filter((l) => reaches(l.name, l.name)).map((l) => l.name)).toEqual([]);
  });

  it('gives every folder directly under framework/ and runners/, and every source file, a layer', () => {
    const listed = layers.flatMap((l) => l.paths);
    for (const top of ['framework', 'runners']) {
      const folders = readdirSync(path.join(root, top), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `${top}/${e.name}/`);
      expect(folders.filter((f) => !listed.includes(f)), `folders under ${top}/ without a row in docs/architecture.md`).toEqual([]);
    }
    expect(files.length).toBeGreaterThan(300); // the walk sees the tree
    expect(files.filter((f) => !layerOf(f))).toEqual([]);
    expect(listed.filter((p) => !existsSync(path.join(root, p))), 'rows naming what is not there').toEqual([]);
  });

  it('has every import go to its own layer or one its row names', () => {
    expect(edges.filter((e) => e.typeOnly).length).toBeGreaterThan(50); // type-only imports are told apart
    expect(edges.filter((e) => breaksLayers(e) && !isException(e)).map(show)).toEqual([]);
  });

  it('needs every exception it lists', () => {
    const unused = exceptions.filter((x) => !edges.some((e) => e.file === x.from && e.target === x.to && breaksLayers(e)));
    expect(unused.map((x) => `${x.from} -> ${x.to}`)).toEqual([]);
  });

  it('is the linter\'s too: biome.boundaries.jsonc holds the table as restricted imports (npm run lint fails an upward import)', () => {
    expect(readFileSync(path.join(root, BOUNDARIES_FILE), 'utf8'), 'run: node --import tsx scripts/lint-boundaries.ts').toBe(boundariesFileText());
    const biome = readFileSync(path.join(root, 'biome.jsonc'), 'utf8');
    expect(biome).toContain(`"extends": ["./${BOUNDARIES_FILE}"]`);
    // The scheduler's files may not name the jobs layer, in the words their imports would use.
    const scheduler = boundariesFileText().split('\n').find((l) => l.includes('"framework/scheduler/*.ts"'));
    expect(scheduler).toContain('"../jobs/**"');
    expect(scheduler).not.toContain('"../../runners/common/**"');
  });

  it('would refuse an upward import', () => {
    expect(breaksLayers({ file: 'framework/scheduler/replay.ts', target: 'framework/jobs/job-manager.ts', typeOnly: false })).toBe(true);
    expect(breaksLayers({ file: 'runners/trtllm/serve-bench/main.ts', target: 'framework/metrics/metric.ts', typeOnly: false })).toBe(true);
    expect(breaksLayers({ file: 'runners/trtllm/serve-bench/main.ts', target: 'framework/metrics/metric.ts', typeOnly: true })).toBe(false);
    expect(breaksLayers({ file: 'runners/xfer/engine.ts', target: 'framework/metrics/metric.ts', typeOnly: true })).toBe(true);
    expect(breaksLayers({ file: 'runners/common/size.ts', target: 'runners/xfer/engine.ts', typeOnly: false })).toBe(true);
  });
});

describe('module boundaries: runners and test types', () => {
  /** The runners each test type's modules may import (framework/types/<type>.ts and <type>/). */
  const TYPE_RUNNERS: Record<string, string[]> = {
    serving: ['trtllm', 'llamacpp'],
    disagg: ['trtllm', 'llamacpp'],
    wideep: ['trtllm', 'llamacpp'],
    nixl: ['nixl', 'xfer'],
  };
  /** The neutral module under runners/: not a runner, importable by every runner and the framework. */
  const NEUTRAL = 'common';
  const runnerOf = (file: string) => {
    const dir = /^runners\/([^/]+)\//.exec(file)?.[1];
    return dir === NEUTRAL ? undefined : dir;
  };
  const typeOf = (file: string) => /^framework\/types\/([^/.]+)(?:\/|\.ts$)/.exec(file)?.[1];

  /** Runner-to-runner imports that must be: the embedded serving engine hands the KV cache over through the transfer engine. */
  const CROSSINGS: Record<string, string[]> = { llamacpp: ['xfer'] };

  it('no runner imports another runner', () => {
    expect(edges.some(({ file }) => runnerOf(file) === 'nixl')).toBe(true); // the walk sees the runners
    expect(edges.some(({ file, target }) => runnerOf(file) === 'llamacpp' && runnerOf(target) === 'xfer')).toBe(true); // the crossing is used
    const crossing = edges.filter(({ file, target }) => {
      const from = runnerOf(file);
      const to = runnerOf(target);
      return from && to && from !== to && !(CROSSINGS[from] ?? []).includes(to);
    });
    expect(crossing.map(show)).toEqual([]);
  });

  it('runners/common imports nothing from a runner or the framework; the engine nothing from the framework', () => {
    expect(sourceFiles(`runners/${NEUTRAL}`)).toEqual(expect.arrayContaining([`runners/${NEUTRAL}/hostlist.ts`, `runners/${NEUTRAL}/size.ts`]));
    const common = edges.filter(({ file, target }) => file.startsWith(`runners/${NEUTRAL}/`) && !target.startsWith(`runners/${NEUTRAL}/`));
    expect(common.map(show)).toEqual([]);
    const engine = edges.filter(({ file, target }) => runnerOf(file) === 'xfer' && target.startsWith('framework/'));
    expect(engine.map(show)).toEqual([]);
  });

  it('a test type imports its own runners only', () => {
    const wrong = edges.filter(({ file, target }) => {
      const type = typeOf(file);
      const runner = runnerOf(target);
      return type !== undefined && runner !== undefined && !(TYPE_RUNNERS[type] ?? []).includes(runner);
    });
    expect(wrong.map(show)).toEqual([]);
  });

  it('shell quoting, job_time and placeholders have one home, the neutral module', () => {
    const nixl = edges.filter(({ file }) => typeOf(file) === 'nixl').map(({ target }) => target);
    expect(nixl).toContain(`runners/${NEUTRAL}/shell.ts`);
    expect(nixl).toContain(`runners/${NEUTRAL}/job-time.ts`);
    expect(existsSync(path.join(root, 'framework/types/common'))).toBe(false);
    const placeholderUsers = edges.filter((e) => e.target === `runners/${NEUTRAL}/placeholder.ts`).map((e) => e.file);
    expect(placeholderUsers).toEqual(expect.arrayContaining(['framework/config/resolve.ts', 'framework/scheduler/slurm.ts', 'framework/types/serving/job/plan-context.ts']));
  });

  it('each test type owns its job builder (framework/types/<type>/job/); runners/ holds only what runs in an allocation', () => {
    for (const type of ['serving', 'nixl']) expect(sourceFiles(`framework/types/${type}/job`)).toContain(`framework/types/${type}/job/job-builder.ts`);
    expect(sourceFiles('runners/trtllm').filter((file) => !file.startsWith('runners/trtllm/serve-bench/'))).toEqual([]);
    const intoTypes = edges.filter(({ file, target }) => file.startsWith('runners/') && target.startsWith('framework/types/'));
    expect(intoTypes.map(show)).toEqual([]);
  });
});

describe('module boundaries: the scheduler seam', () => {
  /** The backends' own files: only the scheduler layer (and its registrations) may name them. */
  const BACKEND = /^framework\/scheduler\/(slurm|local|replay)[^/]*\.ts$/;

  it('above the scheduler layer, nothing imports a backend or compares a scheduler\'s name', () => {
    const above = files.filter((f) => !f.startsWith('framework/scheduler/'));
    expect(edges.some((e) => e.file.startsWith('framework/jobs/') && e.target === 'framework/scheduler/registry.ts')).toBe(true); // the walk sees the seam
    const imports = edges.filter((e) => above.includes(e.file) && BACKEND.test(e.target) && !e.typeOnly);
    expect(imports.map(show)).toEqual([]);
    const named = above.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8').split('\n').flatMap((line, i) =>
        /(?<!typeof )\bscheduler(?:\.name|Kind\([^)]*\))?\s*[!=]==\s*['"]|\.scheduler\s*[!=]==\s*['"]/.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
    expect(named).toEqual([]);
  });
});

describe('module boundaries: product code and every import form', () => {
  it('product code imports nothing from tests/ or bench/, and no computed path', () => {
    const product = [...edges, ...productEntries.flatMap((file) => importsOf(file))];
    expect(product.some((e) => e.file === 'vitest.config.ts')).toBe(true); // the walk sees the config
    expect(product.map(outsideProduct).filter(Boolean)).toEqual([]);
  });

  /** The violations one made-up file would have: layers, exceptions and the product rules. */
  const violations = (file: string, text: string) =>
    importsOf(file, text).flatMap((e) => [outsideProduct(e), breaksLayers(e) && !isException(e) ? `${show(e)}: breaks the layer table` : undefined].filter(Boolean));

  it.each([
    ['a multi-line import with comments inside', `import {
      // the job's states
      JobManager, /* and its type */ type SubmittedJob,
    } from '../jobs/job-manager.ts';`, /framework\/jobs\/job-manager\.ts: breaks the layer table/],
    ['an import of tests/', `import { RecordingScheduler } from '../../tests/fixtures/jobs/recording-scheduler.ts';`, /product code imports tests\//],
    ['an import of bench/', `export { run } from '../../bench/orchestration.ts';`, /product code imports bench\//],
    ['createRequire', `import { createRequire } from 'node:module';\nconst load = createRequire(import.meta.url);\nconst jobs = load('../jobs/ledger.ts');`, /framework\/jobs\/ledger\.ts: breaks the layer table/],
    ['createRequire called at once', `import { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('../../tests/setup/cluster.ts');`, /product code imports tests\//],
    ['a template-string import()', 'const m = await import(`../jobs/session.ts`);', /framework\/jobs\/session\.ts: breaks the layer table/],
    ['a computed import()', 'const name = "session";\nconst m = await import(`../jobs/${name}.ts`);', /a computed import/],
    ['import x = require()', `import ledger = require('../jobs/ledger.ts');`, /breaks the layer table/],
    ['a side-effect import', `import '../suite/global-setup.ts';`, /breaks the layer table/],
  ])('catches %s', (_form, text, says) => {
    const found = violations('framework/scheduler/made-up.ts', text);
    expect(found.join('\n')).toMatch(says);
  });

  it('keeps a type-only import type-only, in every spelling', () => {
    const typeOnly = (text: string) => importsOf('runners/nixl/made-up.ts', text).map((e) => e.typeOnly);
    expect(typeOnly(`import type { Metric } from '../../framework/metrics/metric.ts';`)).toEqual([true]);
    expect(typeOnly(`import { type Metric, type MetricUnit } from '../../framework/metrics/metric.ts';`)).toEqual([true]);
    expect(typeOnly(`export type { Metric } from '../../framework/metrics/metric.ts';`)).toEqual([true]);
    expect(typeOnly(`import { type Metric, metricKey } from '../../framework/metrics/metric.ts';`)).toEqual([false]);
    expect(typeOnly(`import Default, { type Metric } from '../../framework/metrics/metric.ts';`)).toEqual([false]);
  });
});
