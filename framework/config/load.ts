// Reading one config file: YAML with source positions, so every later error can name file:line:col.
import { readFileSync, statSync } from 'node:fs';
import { isAlias, isMap, isSeq, isPair, isScalar, LineCounter, parseDocument } from 'yaml';
import type { Document, Node } from 'yaml';
import type { KeyPath } from '../types/test-type.ts';
import type { ConfigIssue } from './issue.ts';

export interface SourcePosition {
  line: number;
  col: number;
}

export interface ParsedYaml {
  /** The plain data (aliases resolved); undefined when the file does not parse. */
  data: unknown;
  /** Parse errors (syntax, tabs, duplicate keys), each with its position. */
  issues: ConfigIssue[];
  /** Position of the key (or, for array items, the value) at `path`; the closest ancestor if absent. */
  locate(path: KeyPath): SourcePosition | undefined;
}

/** Aliases in a hand-written config are few; a large count means an alias bomb, not a config. */
const MAX_ALIAS_COUNT = 1000;

/** Bytes YAML forbids (C0 controls but tab, LF, CR; DEL) and U+FFFD, what invalid UTF-8 decodes to. */
const NOT_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFD]/;

export function parseYaml(text: string, displayFile: string): ParsedYaml {
  const binary = NOT_TEXT.exec(text);
  if (binary) {
    const before = text.slice(0, binary.index).split('\n');
    const code = binary[0].codePointAt(0)!;
    const what = code === 0xfffd ? 'bytes that are not UTF-8' : `control byte 0x${code.toString(16).padStart(2, '0')}`;
    return {
      data: undefined,
      issues: [{ file: displayFile, line: before.length, col: before[before.length - 1].length + 1, message: `not a YAML text file: ${what}` }],
      locate: () => undefined,
    };
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  const position = (offset: number): SourcePosition => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, col };
  };
  const issues: ConfigIssue[] = doc.errors.map((err) => ({
    file: displayFile,
    line: err.linePos?.[0].line,
    col: err.linePos?.[0].col,
    // yaml's message repeats the position and quotes the source; the first sentence is the point.
    message: err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''),
  }));
  if (!/\S/.test(text.replace(/^#.*$/gm, ''))) {
    issues.push({ file: displayFile, line: 1, col: 1, message: 'the file is empty' });
  }
  let data: unknown;
  if (issues.length === 0) {
    try {
      data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      issues.push({ file: displayFile, line: 1, col: 1, message: (err as Error).message });
    }
  }
  return { data, issues, locate: (path) => locateInDocument(doc, path, position) };
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file (a link to nothing?)',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ELOOP: 'a link that points to itself',
  EISDIR: 'a folder',
};

/**
 * A config file's text as UTF-8, or the one issue that makes it no text to parse: unreadable, not
 * a regular file (a FIFO would block the run forever), UTF-16. A UTF-8 byte-order mark is dropped.
 */
export function readConfigText(absFile: string, displayFile: string): { text: string; issue?: undefined } | { text?: undefined; issue: ConfigIssue } {
  const fail = (message: string) => ({ issue: { file: displayFile, line: 1, col: 1, message } });
  let bytes: Buffer;
  try {
    const stat = statSync(absFile);
    if (!stat.isFile()) return fail(`not a regular file (${stat.isDirectory() ? 'a folder' : stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device'}); expected a YAML text file`);
    bytes = readFileSync(absFile);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return fail(`cannot be read: ${READ_ERRORS[code] ?? (err as Error).message} (${code})`);
  }
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return fail(`UTF-16 text (byte-order mark ${bytes[0].toString(16).toUpperCase()} ${bytes[1].toString(16).toUpperCase()}); save the file as UTF-8`);
  }
  const utf8Bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  return { text: bytes.toString('utf8', utf8Bom ? 3 : 0) };
}

export function readYamlFileSync(absFile: string, displayFile: string): ParsedYaml {
  const read = readConfigText(absFile, displayFile);
  if (read.issue) return { data: undefined, issues: [read.issue], locate: () => undefined };
  return parseYaml(read.text, displayFile);
}

function locateInDocument(
  doc: Document,
  path: KeyPath,
  position: (offset: number) => SourcePosition,
): SourcePosition | undefined {
  let node: unknown = doc.contents;
  let best: number | undefined = rangeStart(node);
  for (const key of path) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && scalarKey(p.key) === String(key));
      if (!pair) break;
      best = rangeStart(pair.key) ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      const item = node.items[key];
      if (item === undefined) break;
      best = rangeStart(item) ?? best;
      node = item;
    } else {
      break;
    }
  }
  return best === undefined ? undefined : position(best);
}

function scalarKey(key: unknown): string | undefined {
  return isScalar(key) ? String(key.value) : undefined;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
