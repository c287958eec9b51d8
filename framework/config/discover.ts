// Finding config files: $WORK_DIR/test_configs/<test_type>/<category>/*.yaml, `templates` skipped.
import path from 'node:path';
import fg from 'fast-glob';
import { identityOf, type ConfigIdentity } from './ids.ts';

export interface ConfigFile extends ConfigIdentity {
  absFile: string;
  /** Path shown in messages: relative to WORK_DIR. */
  displayFile: string;
}

export interface Discovery {
  files: ConfigFile[];
  /** Files that are in test_configs/ but not at <type>/<category>/<name>.yaml. */
  misplaced: string[];
}

export function discoverConfigs(workDir: string, testType?: string): Discovery {
  const root = testType ? `test_configs/${fg.escapePath(testType)}` : 'test_configs';
  // Not only regular files: a link to nothing, a FIFO or an unreadable file named *.yaml is a
  // config the user meant, and fails as one (config/load.ts says why) instead of vanishing.
  const found = fg.sync(`${root}/**/*.{yaml,yml}`, {
    cwd: workDir,
    ignore: ['**/templates/**'],
    onlyFiles: false,
    markDirectories: true,
    followSymbolicLinks: true,
  }).filter((rel) => !rel.endsWith('/'));
  const files: ConfigFile[] = [];
  const misplaced: string[] = [];
  for (const rel of found.sort()) {
    const identity = identityOf(rel);
    if (!identity) {
      misplaced.push(rel);
      continue;
    }
    files.push({ ...identity, absFile: path.join(workDir, rel), displayFile: rel });
  }
  return { files, misplaced };
}
