// Test ids: `<test_type>_<category>_<file stem>`, as the Python framework named them, so test
// lists and dashboards carry over.
import path from 'node:path';

export interface ConfigIdentity {
  id: string;
  testType: string;
  category: string;
  stem: string;
}

/**
 * Identity of `test_configs/<type>/<category>/<stem>.yaml` (path relative to WORK_DIR, `/`
 * separated: a backslash is part of a name on Linux, as in `a\\b.yaml`).
 */
export function identityOf(relFile: string): ConfigIdentity | undefined {
  const parts = relFile.split('/');
  if (parts.length !== 4 || parts[0] !== 'test_configs') return undefined;
  const [, testType, category, file] = parts;
  const stem = pythonStem(file);
  return { id: `${testType}_${category}_${stem}`, testType, category, stem };
}

/**
 * The file name without its suffix, as pathlib's PurePath.stem (upstream's test ids use it): a
 * name whose only dot leads it (`.yaml`) has no suffix, so its stem is the whole name.
 */
export function pythonStem(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(0, dot) : name;
}

/**
 * A test-list line to an id. Accepts bare ids and the Python framework's pytest node ids
 * (`test_disagg.py::TestDisaggBenchmark::test_benchmark[<id>]`, any path before it).
 */
export function idFromTestListEntry(entry: string): string {
  const nodeId = /::[^[\]]*\[(.+)\]$/.exec(entry);
  if (nodeId) return nodeId[1];
  return path.basename(entry.trim());
}
