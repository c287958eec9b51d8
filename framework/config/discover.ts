// Finding config files: $WORK_DIR/test_configs/<test_type>/<category>/<name>.yaml, as upstream's
// ConfigLoader.scan_configs walks them (utils/config_loader.py: iterdir of the types, skipping
// `templates`, iterdir of the categories, glob("*.yaml") in each; links followed, names with
// leading dots included, as pathlib does). Also .yml. Nothing named like a config is skipped
// silently: an entry named *.yaml at the config level is a config whatever it is (a folder, a FIFO,
// a link to nothing fails as one, config/load.ts says why); a *.yaml anywhere else under
// test_configs/ is reported as misplaced; a name that is almost a config's (`X.YAML`) is reported.
// Folders below the categories are looked through for misplaced files with each real folder read
// once: a link back to a folder already read (a loop) is one notice naming the link, never a walk
// without end.
import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { identityOf, type ConfigIdentity } from './ids.ts';

export interface ConfigFile extends ConfigIdentity {
  absFile: string;
  /** Path shown in messages: relative to WORK_DIR, control characters escaped. */
  displayFile: string;
}

export interface Discovery {
  files: ConfigFile[];
  /** Files named like configs that are in test_configs/ but not at <type>/<category>/<name>.yaml. */
  misplaced: string[];
  /** One line each: links not followed (loops, folders read already), names almost a config's. */
  notices: string[];
}

/** A config's file name: upstream globs `*.yaml`; `.yml` is this project's addition. */
export const CONFIG_NAME = /\.ya?ml$/;
const ALMOST_CONFIG_NAME = /\.ya?ml$/i;

/** The path as a terminal can show it: a CR or another control character in a name is escaped. */
export function displayPath(rel: string): string {
  return rel.replace(/[\u0000-\u001F\u007F]/g, (c) => (c === '\r' ? '\\r' : c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}

interface Entry {
  name: string;
  rel: string;
  abs: string;
  /** What the entry is once links are followed; undefined for a link to nothing or an unreadable one. */
  isDir: boolean;
  isLink: boolean;
}

class Walker {
  readonly files: ConfigFile[] = [];
  readonly misplaced: string[] = [];
  readonly notices: string[] = [];
  /** Real paths of the folders read, and the path they were first read under. */
  private readonly read = new Map<string, string>();
  private readonly rootReal: string;

  constructor(private readonly workDir: string, root: string) {
    this.rootReal = realpathSync(path.join(workDir, root));
  }

  private entries(rel: string): Entry[] {
    let dirents: Dirent[];
    try {
      dirents = readdirSync(path.join(this.workDir, rel), { withFileTypes: true });
    } catch (err) {
      this.notices.push(`${displayPath(rel)}/: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); its configs are not seen`);
      return [];
    }
    return dirents
      .map((d) => {
        const entryRel = `${rel}/${d.name}`;
        const abs = path.join(this.workDir, entryRel);
        let isDir = d.isDirectory();
        if (d.isSymbolicLink()) {
          try {
            isDir = statSync(abs).isDirectory();
          } catch {
            isDir = false;
          }
        }
        return { name: d.name, rel: entryRel, abs, isDir, isLink: d.isSymbolicLink() };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Whether to read a folder: not when it is one of `ancestors` (a loop) or, below the categories,
   * when it was read already (each real folder once). Says so in one notice naming the link.
   */
  private enter(entry: Entry, ancestors: string[], once: boolean): string | undefined {
    let real: string;
    try {
      real = realpathSync(entry.abs);
    } catch (err) {
      this.notices.push(`${displayPath(entry.rel)}: cannot be followed (${(err as NodeJS.ErrnoException).code}); not read`);
      return undefined;
    }
    const earlier = this.read.get(real);
    if (ancestors.includes(real)) {
      this.notices.push(`${displayPath(entry.rel)}: a link back to ${displayPath(earlier ?? real)}, which holds it (a loop); not followed`);
      return undefined;
    }
    if (once && earlier !== undefined) {
      this.notices.push(`${displayPath(entry.rel)}: a link to ${displayPath(earlier)}, read already; not followed again`);
      return undefined;
    }
    if (once && entry.isLink && real !== this.rootReal && !real.startsWith(this.rootReal + path.sep)) {
      this.notices.push(`${displayPath(entry.rel)}: a link to a folder outside test_configs/ below a category; not followed (configs live at test_configs/<test_type>/<category>/<name>.yaml)`);
      return undefined;
    }
    if (earlier === undefined) this.read.set(real, entry.rel);
    return real;
  }

  /** A name that is a config's but for its case: said, since it would otherwise vanish. */
  private almost(entry: Entry): boolean {
    if (CONFIG_NAME.test(entry.name) || !ALMOST_CONFIG_NAME.test(entry.name)) return false;
    this.notices.push(`${displayPath(entry.rel)}: ignored, a config's name ends in .yaml or .yml (lower case)`);
    return true;
  }

  walk(root: string, testType?: string): void {
    this.read.set(this.rootReal, root);
    const rootAncestors = [this.rootReal];
    const types = testType ? this.entries(root).filter((e) => e.name === testType) : this.entries(root);
    for (const typeEntry of types) {
      if (!typeEntry.isDir) {
        if (CONFIG_NAME.test(typeEntry.name)) this.misplaced.push(displayPath(typeEntry.rel));
        else this.almost(typeEntry);
        continue;
      }
      if (typeEntry.name === 'templates') continue;
      const typeReal = this.enter(typeEntry, rootAncestors, false);
      if (!typeReal) continue;
      const typeAncestors = [...rootAncestors, typeReal];
      for (const categoryEntry of this.entries(typeEntry.rel)) {
        if (!categoryEntry.isDir) {
          if (CONFIG_NAME.test(categoryEntry.name)) this.misplaced.push(displayPath(categoryEntry.rel));
          else this.almost(categoryEntry);
          continue;
        }
        const categoryReal = this.enter(categoryEntry, typeAncestors, false);
        if (!categoryReal) continue;
        this.category(categoryEntry.rel, [...typeAncestors, categoryReal]);
      }
    }
  }

  private category(rel: string, ancestors: string[]): void {
    for (const entry of this.entries(rel)) {
      // Named like a config: a config, whatever it turns out to be (a folder, a FIFO...).
      if (CONFIG_NAME.test(entry.name)) {
        const identity = identityOf(entry.rel);
        if (identity) this.files.push({ ...identity, absFile: entry.abs, displayFile: displayPath(entry.rel) });
        continue;
      }
      if (this.almost(entry) || !entry.isDir || entry.name === 'templates') continue;
      const real = this.enter(entry, ancestors, true);
      if (real) this.below(entry.rel, [...ancestors, real]);
    }
  }

  /** Below a category nothing is a config: misplaced files are looked for, each real folder once. */
  private below(rel: string, ancestors: string[]): void {
    for (const entry of this.entries(rel)) {
      if (entry.isDir) {
        if (entry.name === 'templates') continue;
        const real = this.enter(entry, ancestors, true);
        if (real) this.below(entry.rel, [...ancestors, real]);
      } else if (CONFIG_NAME.test(entry.name)) {
        this.misplaced.push(displayPath(entry.rel));
      } else {
        this.almost(entry);
      }
    }
  }
}

export function discoverConfigs(workDir: string, testType?: string): Discovery {
  const root = 'test_configs';
  let walker: Walker;
  try {
    walker = new Walker(workDir, root);
  } catch {
    return { files: [], misplaced: [], notices: [] }; // no test_configs/: nothing to run
  }
  walker.walk(root, testType);
  const byPath = (a: { absFile: string }, b: { absFile: string }) => (a.absFile < b.absFile ? -1 : a.absFile > b.absFile ? 1 : 0);
  return { files: walker.files.sort(byPath), misplaced: walker.misplaced.sort(), notices: walker.notices };
}
