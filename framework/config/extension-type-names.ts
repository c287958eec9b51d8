// The test types' names with WORK_DIR's extensions loaded: what vitest.config.ts needs to make a
// project of each. The config loads this through tsx, and only when
// WORK_DIR/disagg-bench.yaml is there, so Vite's bundling of the config (which parses every module
// the config imports, dynamic ones included) never takes in the extension machinery.
import { allTestTypeNames } from '../contract/extension-types.ts';
import { loadExtensions } from './extensions.ts';

export async function testTypeNamesWithExtensions(workDir: string): Promise<string[]> {
  await loadExtensions(workDir);
  return allTestTypeNames();
}
