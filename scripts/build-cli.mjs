// The CLI compiled to JavaScript, so a process of `disagg-bench` (every transfer rank is one) starts
// on plain node instead of paying tsx's ~300 ms per process. bin/disagg-bench.js uses it only while
// it matches the sources: each build records the mtime and size of every file it was made from, and
// any change makes the bin rebuild (or fall back to tsx). Kept in node_modules/.cache, never committed.
//
// Layout: <cache>/current.json names the build in use and its inputs; <cache>/b-<id>/ holds one build.
// A build is made in <cache>/b-<id>.tmp and renamed into place, and current.json is replaced by
// rename, so ranks racing to build never see a half-written one, and a process already running from
// an older build keeps its files (builds older than a day, other than the current one, are removed).
//
// `node scripts/build-cli.mjs` builds now and prints where.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ENTRY = 'framework/cli.ts';
const POINTER = 'current.json';
const KEEP_OLD_BUILDS_MS = 24 * 3600_000;

/** Where the builds of the package at `root` live. */
export function cliCacheDir(root) {
  return path.join(root, 'node_modules', '.cache', 'disagg-bench', 'cli');
}

/** The current build's entry file if every file it was made from is unchanged, else undefined. */
export function freshCliBundle(root, cacheDir = cliCacheDir(root)) {
  let pointer;
  try {
    pointer = JSON.parse(readFileSync(path.join(cacheDir, POINTER), 'utf8'));
  } catch {
    return undefined;
  }
  for (const [file, [mtimeMs, size]] of Object.entries(pointer.inputs)) {
    let stat;
    try {
      stat = statSync(path.join(root, file));
    } catch {
      return undefined;
    }
    if (stat.mtimeMs !== mtimeMs || stat.size !== size) return undefined;
  }
  const entry = path.join(cacheDir, pointer.build, 'cli.js');
  return existsSync(entry) ? entry : undefined;
}

/** A fresh build's entry file: the current one, or one built now (esbuild, ~0.3 s). */
export async function ensureCliBundle(root, cacheDir = cliCacheDir(root)) {
  return freshCliBundle(root, cacheDir) ?? (await buildCliBundle(root, cacheDir));
}

/** Builds the CLI bundle of the package at `root`, makes it the current one, returns its entry file. */
export async function buildCliBundle(root, cacheDir = cliCacheDir(root)) {
  const { build } = await import('esbuild');
  const startedMs = Date.now();
  const id = `b-${startedMs.toString(36)}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const finalDir = path.join(cacheDir, id);
  const tmpDir = `${finalDir}.tmp`;
  try {
    mkdirSync(tmpDir, { recursive: true });
    const result = await build({
      absWorkingDir: root,
      entryPoints: { cli: path.join(root, ENTRY) },
      outdir: tmpDir,
      bundle: true,
      // The commands are loaded on demand (framework/cli.ts): each stays its own chunk, so a rank
      // of ct-perftest loads neither the framework nor the other benches.
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Packages (koffi, vitest, execa, ...) stay in node_modules, resolved from there as under tsx.
      packages: 'external',
      sourcemap: 'linked',
      sourcesContent: false,
      metafile: true,
      logLevel: 'silent',
      plugins: [sourceUrlPlugin(finalDir)],
    });
    mkdirSync(cacheDir, { recursive: true });
    renameSync(tmpDir, finalDir);
    // An input changed while the build read it counts as unknown, so the next run builds again.
    const inputs = Object.fromEntries(
      Object.keys(result.metafile.inputs).map((file) => {
        const stat = statSync(path.join(root, file));
        return [file.split(path.sep).join('/'), stat.mtimeMs < startedMs ? [stat.mtimeMs, stat.size] : [-1, -1]];
      }),
    );
    const pointerTmp = path.join(cacheDir, `${POINTER}.${id}.tmp`);
    writeFileSync(pointerTmp, JSON.stringify({ build: id, builtAt: new Date(startedMs).toISOString(), inputs }, null, 1));
    renameSync(pointerTmp, path.join(cacheDir, POINTER));
    removeOldBuilds(cacheDir, id);
    return path.join(finalDir, 'cli.js');
  } catch (error) {
    try {
      rmSync(tmpDir, { recursive: true, force: true });
    } catch {
      // nothing was made (e.g. the cache folder cannot exist)
    }
    const detail = error.errors?.length ? error.errors.map((e) => `${e.location?.file ?? ''}:${e.location?.line ?? ''}: ${e.text}`).join('; ') : error.message;
    throw new Error(`cannot build the CLI bundle of ${root} into ${cacheDir}: ${detail}`);
  }
}

/**
 * Every `import.meta.url` in the sources becomes the URL of the source file itself, computed
 * relative to the chunk, so paths found from it (packageRoot, local-bin/, job-prelude.sh, the bin,
 * the report's page script, createRequire) point into the source tree as under tsx, and the
 * bundle stays valid if the whole checkout moves.
 */
function sourceUrlPlugin(outDir) {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
        const relative = path.relative(outDir, args.path).split(path.sep).join('/');
        return { contents: text.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`), loader: 'ts' };
      });
    },
  };
}

function removeOldBuilds(cacheDir, keep) {
  const now = Date.now();
  for (const name of readdirSync(cacheDir)) {
    if (name === keep || name === POINTER) continue;
    const full = path.join(cacheDir, name);
    try {
      if (now - statSync(full).mtimeMs > (name.endsWith('.tmp') ? 3600_000 : KEEP_OLD_BUILDS_MS)) rmSync(full, { recursive: true, force: true });
    } catch {
      // another process removed it first
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const t0 = performance.now();
  const entry = await buildCliBundle(root);
  console.log(`${path.relative(root, entry)} (${(performance.now() - t0).toFixed(0)} ms)`);
}
