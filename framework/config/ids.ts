// Test ids: `<test_type>_<category>_<file stem>`, as the Python framework named them, so test
// lists and dashboards carry over.

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
 * The longest test id, in bytes of UTF-8. A test's logs live in OUTPUT_PATH/slurm_logs/<test id>/,
 * and a later run of the test keeps them by renaming that folder to `<test id>.<job id>`: both
 * names must fit the 255-byte limit of a file name (NAME_MAX on Linux file systems), with room for
 * the job id (SLURM's, an array job's `123_4`, or a timestamp of 24 characters) and a counter.
 */
export const MAX_TEST_ID_BYTES = 255 - 32;

/** Why a test id cannot name its log folder, or undefined when it can. */
export function testIdProblem(id: string): string | undefined {
  const bytes = Buffer.byteLength(id);
  if (bytes <= MAX_TEST_ID_BYTES) return undefined;
  return `the test id ${id.slice(0, 40)}... is ${bytes} bytes, more than the ${MAX_TEST_ID_BYTES} taken: it names the test's log folder (and, with the earlier job's id, the folder its logs are kept in on a later run), and a file name holds at most 255 bytes; shorten the config's file name by ${bytes - MAX_TEST_ID_BYTES} bytes`;
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
 * The function of upstream's test_disagg.py that runs a config of this category, the name in its
 * pytest node id and its CSV rows (test_disagg.py: test_benchmark for perf, test_accuracy,
 * test_stress; categories it does not collect, perf-sanity here, run as test_benchmark).
 */
export function pytestFunctionOf(category: string): string {
  return category === 'accuracy' ? 'test_accuracy' : category === 'stress' ? 'test_stress' : 'test_benchmark';
}

/** One test-list line: a bare id, or upstream's pytest node id of a test. */
export interface TestListEntry {
  id: string;
  /** The test function a node id names (test_benchmark...); undefined for a bare id. */
  nodeFunction?: string;
  /** Why the line can match no test (a `::` form that is not upstream's node id). */
  problem?: string;
}

// Upstream's node ids, relative to the folder pytest runs in (conftest.py compares item.nodeid).
const NODE_ID = /^(?:.*\/)?test_disagg\.py::TestDisaggBenchmark::(test_[A-Za-z0-9_]+)\[(.+)\]$/;

/**
 * A test-list line (comment and blanks already removed): a bare id is the id as written; a node id
 * must be upstream's own (`test_disagg.py::TestDisaggBenchmark::test_benchmark[<id>]`, any folder
 * before test_disagg.py), and its function is checked against the test's category on selection.
 */
export function parseTestListEntry(entry: string): TestListEntry {
  const nodeId = NODE_ID.exec(entry);
  if (nodeId) return { id: nodeId[2], nodeFunction: nodeId[1] };
  if (entry.includes('::')) {
    return { id: entry, problem: 'not a node id of upstream\'s test_disagg.py (test_disagg.py::TestDisaggBenchmark::test_benchmark[<id>])' };
  }
  return { id: entry };
}
