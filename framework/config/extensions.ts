// Extensions from outside the checkout: modules named in WORK_DIR/disagg-bench.yaml under
// `extensions:` register schedulers, launchers, test types and metric extractors, so a site with its own
// workload manager adds it without forking (submitit's plugins, found through a list rather than
// entry points). Each entry is a path (relative to WORK_DIR) or a package name (resolved from
// WORK_DIR); the module is an ES module in JavaScript, as a package publishes it, exporting
// `register(api)`. It imports nothing of disagg-bench: what it needs comes in `api`, so it works
// against the installed copy whichever way that copy runs. Every process that asks the registries
// loads them first (`disagg-bench run` and `cleanup`, the Vitest entry's global setup and its
// workers), each module once per process.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from '../../runners/common/errors.ts';

export const EXTENSIONS_FILE = 'disagg-bench.yaml';

const loaded = new Map<string, Promise<void>>();

/**
 * The `extensions:` entries of WORK_DIR/disagg-bench.yaml; none when the file or the key is absent.
 * The YAML loader is imported only when the file is there: most runs and every plain listing have
 * none, and pay nothing for extensions.
 */
async function extensionEntries(file: string): Promise<string[]> {
  if (!existsSync(file)) return [];
  const { readYamlFileSync } = await import('./load.ts');
  const parsed = readYamlFileSync(file, file);
  const data = parsed.data as Record<string, unknown> | null;
  if (parsed.issues.length > 0 || typeof data !== 'object' || data === null || !('extensions' in data)) return []; // the profile reader reports a broken file
  const list = data.extensions;
  const pos = parsed.locate(['extensions']);
  const where = `${file}:${pos?.line ?? 1}:${pos?.col ?? 1} extensions`;
  if (!Array.isArray(list) || !list.every((e) => typeof e === 'string' && e.trim() !== '')) {
    throw new InputError(`${where}: expected a list of module paths (relative to WORK_DIR) or package names`, { file });
  }
  return list as string[];
}

/** Where an entry's module is: a path against WORK_DIR, or a package resolved from WORK_DIR. */
function resolveEntry(workDir: string, entry: string, file: string): string {
  if (entry.startsWith('.') || path.isAbsolute(entry)) {
    const resolved = path.resolve(workDir, entry);
    if (!existsSync(resolved)) throw new InputError(`${file}: extension ${JSON.stringify(entry)}: ${resolved} does not exist`, { file, place: 'extensions' });
    return resolved;
  }
  try {
    return createRequire(path.join(workDir, 'package.json')).resolve(entry);
  } catch (error) {
    throw new InputError(`${file}: extension ${JSON.stringify(entry)}: no package of that name is installed for ${workDir} (${(error as Error).message.split('\n')[0]})`, { file, place: 'extensions' });
  }
}

/** Loads and registers WORK_DIR's extensions (each module once per process); resolves to their paths. */
export async function loadExtensions(workDir: string): Promise<string[]> {
  const file = path.join(workDir, EXTENSIONS_FILE);
  const modules = (await extensionEntries(file)).map((entry) => ({ entry, resolved: resolveEntry(workDir, entry, file) }));
  for (const { entry, resolved } of modules) {
    let once = loaded.get(resolved);
    if (!once) {
      once = registerFrom(resolved, entry, file);
      loaded.set(resolved, once);
    }
    await once;
  }
  return modules.map((m) => m.resolved);
}

async function registerFrom(resolved: string, entry: string, file: string): Promise<void> {
  // The one import whose path is known only at run time: the module the user's file names.
  const module = (await import(pathToFileURL(resolved).href)) as { register?: unknown };
  if (typeof module.register !== 'function') {
    throw new InputError(`${file}: extension ${JSON.stringify(entry)} (${resolved}) exports no register(api) function`, { file, place: 'extensions' });
  }
  await module.register((await import('./extension-api.ts')).extensionApi);
}
