// Test lists: one id per line, in the order to run; `#` comments and blank lines ignored. Lines
// may be bare ids or upstream's exact pytest node ids (config/ids.ts); where selection differs
// from upstream's conftest.py (bare ids, inline comments, order, unknown ids) is in
// docs/trtllm-compatibility.md, "Test lists".
import path from 'node:path';
import { parseTestListEntry, pytestFunctionOf, type TestListEntry } from '../config/ids.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export interface TestList {
  file: string;
  /** Ids in the listed order, duplicates removed (first occurrence kept). */
  ids: string[];
  /** Line number (1-based) of each id, for messages. */
  lines: Map<string, number>;
  /** What each id's line said beyond the id (the node id's function, a problem). */
  entries: Map<string, TestListEntry>;
}

export class TestListError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  /** `file`: the list's path as read (WORK_DIR applied). */
  constructor(message: string, file: string) {
    super(message, { file, place: 'DISAGG_TEST_LIST', expected: 'one test id per line' });
    this.name = 'TestListError';
  }
}

/** Reads DISAGG_TEST_LIST (relative to WORK_DIR); a missing, unreadable or empty list is an error. */
export function readTestList(listPath: string, workDir: string): TestList {
  const file = path.resolve(workDir, listPath);
  const where = `DISAGG_TEST_LIST=${JSON.stringify(listPath)} (${file})`;
  let text: string;
  try {
    // A regular file of a bounded size: a FIFO would block the run in a read Ctrl-C cannot stop.
    text = readTextFileSync(file, READ_LIMITS.testList);
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    const reason = err.code === 'not-regular' ? err.reason.replace(/^is not a regular file \((.*)\)$/, 'is $1') : err.reason;
    throw new TestListError(`${where} ${reason}; expected a file with one test id per line${err.code === 'unreadable' ? ', relative to WORK_DIR' : ''}`, file);
  }
  if (text.includes('\0')) throw new TestListError(`${where} holds NUL bytes: not a text file (UTF-16?); expected UTF-8 text, one test id per line`, file);
  const ids: string[] = [];
  const lines = new Map<string, number>();
  const entries = new Map<string, TestListEntry>();
  // A byte-order mark (Windows editors) is not part of the first id; CRLF line ends are accepted.
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, index) => {
    const entry = raw.replace(/#.*$/, '').trim();
    if (!entry) return;
    const parsed = parseTestListEntry(entry);
    if (lines.has(parsed.id)) return;
    ids.push(parsed.id);
    lines.set(parsed.id, index + 1);
    entries.set(parsed.id, parsed);
  });
  if (ids.length === 0) throw new TestListError(`${where} holds no test ids; expected one test id per line`, file);
  return { file: listPath, ids, lines, entries };
}

export interface UnknownListedId {
  id: string;
  line: number;
  /** Why it matches nothing, when there is more to say than "no such config". */
  why?: string;
}

export interface Selection<T> {
  /** Items in test-list order. */
  selected: T[];
  /** Listed ids that match no config, with their line numbers. */
  unknown: UnknownListedId[];
}

/**
 * Keeps the listed items in the listed order. A node id selects its test only when it is the node
 * id upstream gives that test: the function of the test's category (test_accuracy[<id>] for an
 * accuracy config...), as pytest compares node ids exactly.
 */
export function selectByTestList<T extends { id: string; category?: string }>(items: T[], list: TestList): Selection<T> {
  const byId = new Map(items.map((item) => [item.id, item]));
  const selected: T[] = [];
  const unknown: UnknownListedId[] = [];
  for (const id of list.ids) {
    const item = byId.get(id);
    const entry = list.entries.get(id);
    const line = list.lines.get(id) ?? 0;
    const expected = item?.category !== undefined ? pytestFunctionOf(item.category) : undefined;
    if (entry?.problem) unknown.push({ id, line, why: entry.problem });
    else if (item && entry?.nodeFunction && expected && entry.nodeFunction !== expected) {
      unknown.push({ id, line, why: `category ${item.category}: its node id is test_disagg.py::TestDisaggBenchmark::${expected}[${id}], not ${entry.nodeFunction}[...]` });
    } else if (item) selected.push(item);
    else unknown.push({ id, line });
  }
  return { selected, unknown };
}

/** The failure message for listed ids that match no config: the first 20 with their lines, then a count. */
export function describeUnknownIds(list: TestList, unknown: UnknownListedId[], shown = 20): string {
  const lines = unknown.slice(0, shown).map((u) => `  ${list.file}:${u.line} ${u.id}${u.why ? ` (${u.why})` : ''}`);
  if (unknown.length > shown) lines.push(`  ... and ${unknown.length - shown} more`);
  return `${unknown.length === 1 ? 'this id matches' : `these ${unknown.length} ids match`} no config:\n${lines.join('\n')}`;
}
