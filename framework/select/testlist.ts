// Test lists: one id per line, in the order to run; `#` comments and blank lines ignored. Lines
// may be bare ids or the Python framework's pytest node ids.
import path from 'node:path';
import { idFromTestListEntry } from '../config/ids.ts';
import { FileReadError, READ_LIMITS, readTextFileSync } from '../../runners/common/read-file.ts';

export interface TestList {
  file: string;
  /** Ids in the listed order, duplicates removed (first occurrence kept). */
  ids: string[];
  /** Line number (1-based) of each id, for messages. */
  lines: Map<string, number>;
}

export class TestListError extends Error {
  constructor(message: string) {
    super(message);
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
    throw new TestListError(`${where} ${reason}; expected a file with one test id per line${err.code === 'unreadable' ? ', relative to WORK_DIR' : ''}`);
  }
  if (text.includes('\0')) throw new TestListError(`${where} holds NUL bytes: not a text file (UTF-16?); expected UTF-8 text, one test id per line`);
  const ids: string[] = [];
  const lines = new Map<string, number>();
  // A byte-order mark (Windows editors) is not part of the first id; CRLF line ends are accepted.
  text.replace(/^\uFEFF/, '').split(/\r?\n/).forEach((raw, index) => {
    const entry = raw.replace(/#.*$/, '').trim();
    if (!entry) return;
    const id = idFromTestListEntry(entry);
    if (lines.has(id)) return;
    ids.push(id);
    lines.set(id, index + 1);
  });
  if (ids.length === 0) throw new TestListError(`${where} holds no test ids; expected one test id per line`);
  return { file: listPath, ids, lines };
}

export interface Selection<T> {
  /** Items in test-list order. */
  selected: T[];
  /** Listed ids that match no config, with their line numbers. */
  unknown: Array<{ id: string; line: number }>;
}

/** Keeps the listed items in the listed order. */
export function selectByTestList<T extends { id: string }>(items: T[], list: TestList): Selection<T> {
  const byId = new Map(items.map((item) => [item.id, item]));
  const selected: T[] = [];
  const unknown: Array<{ id: string; line: number }> = [];
  for (const id of list.ids) {
    const item = byId.get(id);
    if (item) selected.push(item);
    else unknown.push({ id, line: list.lines.get(id) ?? 0 });
  }
  return { selected, unknown };
}

/** The failure message for listed ids that match no config: the first 20 with their lines, then a count. */
export function describeUnknownIds(list: TestList, unknown: Array<{ id: string; line: number }>, shown = 20): string {
  const lines = unknown.slice(0, shown).map((u) => `  ${list.file}:${u.line} ${u.id}`);
  if (unknown.length > shown) lines.push(`  ... and ${unknown.length - shown} more`);
  return `${unknown.length === 1 ? 'this id matches' : `these ${unknown.length} ids match`} no config:\n${lines.join('\n')}`;
}
