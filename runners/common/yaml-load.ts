// YAML text to plain data with the position of every key, as PyYAML's safe_load reads it where
// upstream's files depend on it, and refused in one located sentence where it cannot be data:
// - merge keys (`<<: *base`, `<<: {..}`, `<<: [*a, *b]`) resolve as PyYAML's
//   SafeConstructor.flatten_mapping does: the mapping's own keys win over merged ones, a later `<<`
//   over an earlier one, and in a list the earlier mapping over the later;
// - a duplicate key is an error naming the key (PyYAML keeps the last; a typo's silent loss is
//   what this project refuses, see README "Configs");
// - an alias to a node that contains it (a recursive structure, which PyYAML builds and JSON,
//   validation and job building cannot) is an error at the alias;
// - aliases that would expand the data past MAX_ALIAS_EXPANSION values (an alias bomb) are refused;
// - an unquoted scalar is what PyYAML's YAML 1.1 resolver makes of it (runners/common/pyyaml-scalars.ts:
//   `yes` a boolean, `017` octal, `1:30` base 60, `1e3` text, `2002-12-14` a date);
// - a whole number beyond 2^53 - 1 is refused: JavaScript would hold it rounded, silently;
// - a file of several documents is refused (PyYAML: "expected a single document in the stream");
// - lone CR line ends (classic Mac) are line ends, as PyYAML reads them.
// The data is built here from the document's nodes in one pass, linear in the file's size: the
// `yaml` library's own uniqueKeys check compares every key with every earlier one (40k keys: 12 s).
// Used by the framework's config loader and by the engine's own benchmark configs (runners/xfer).
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, Scalar } from 'yaml';
import type { Document, Node, Pair, ParsedNode, YAMLMap, YAMLSeq } from 'yaml';
import { resolvePlainScalar } from './pyyaml-scalars.ts';
import { tooDeepAt } from './yaml-nesting.ts';

export type YamlKeyPath = (string | number)[];

export interface YamlPosition {
  line: number;
  col: number;
}

export interface YamlProblem extends YamlPosition {
  message: string;
}

export interface LoadedYaml {
  /** The plain data; undefined when there is any problem. */
  data: unknown;
  problems: YamlProblem[];
  /** Position of the key (or, for list items, the item) at `path`; the closest ancestor if absent. */
  locate(path: YamlKeyPath): YamlPosition | undefined;
}

/**
 * How many values aliases may add to the data beyond those written. Anchors in a real config add
 * a few hundred; a billion-laughs file adds 10^8 and would stall every reader of the data after
 * this one (validation, JSON, job building), which all walk it expanded.
 */
export const MAX_ALIAS_EXPANSION = 100_000;

/**
 * How deep lists and mappings may nest. A config nests a handful of levels; a file nested a
 * thousand deep exhausts the stack of every reader after this one (the `yaml` library itself gives
 * up near 1,000, PyYAML near Python's recursion limit).
 */
export const MAX_NESTING = 100;
/** The most flow collections (and one-line sequence levels) a text may open: memory stays bounded at any size allowed. */
export const MAX_FLOW_COLLECTIONS = 20_000;

/** C0 controls but tab, LF, CR; DEL: bytes YAML (and PyYAML) refuse in a text. */
const NOT_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

const at = (pos: YamlPosition, message: string): YamlProblem => ({ ...pos, message });

/**
 * The text of a YAML file's bytes, or the problem that makes them no text: UTF-16 (a byte-order
 * mark), bytes that are not UTF-8 (located at the first). A UTF-8 byte-order mark is dropped; a
 * U+FFFD written as such is text like any other character.
 */
export function decodeYamlBytes(bytes: Buffer): { text: string; problem?: undefined } | { text?: undefined; problem: YamlProblem } {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    const bom = `${bytes[0].toString(16).toUpperCase()} ${bytes[1].toString(16).toUpperCase()}`;
    return { problem: { line: 1, col: 1, message: `UTF-16 text (byte-order mark ${bom}); save the file as UTF-8` } };
  }
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = bytes.subarray(start);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body) };
  } catch {
    const bad = firstInvalidUtf8(body);
    const prefix = body.subarray(0, bad).toString('utf8');
    // A control byte before the first bad byte is the first problem of the file.
    if (NOT_TEXT.test(prefix)) return { problem: controlByteProblem(prefix)! };
    const before = prefix.split(/\r\n|\r|\n/);
    return {
      problem: {
        line: before.length,
        col: before[before.length - 1].length + 1,
        message: `not a YAML text file: byte 0x${body[bad].toString(16).toUpperCase().padStart(2, '0')} is not UTF-8 (save the file as UTF-8)`,
      },
    };
  }
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i += 1;
      continue;
    }
    const n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    // The second byte's range is narrower after E0, ED, F0, F4 (no overlong forms, no surrogates).
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    if (bytes[i + 1] < lo || bytes[i + 1] > hi) return i;
    for (let k = 2; k < n; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += n;
  }
  return Math.max(0, bytes.length - 1);
}

/** The first control byte YAML refuses, located; undefined when there is none. */
function controlByteProblem(text: string): YamlProblem | undefined {
  const binary = NOT_TEXT.exec(text);
  if (!binary) return undefined;
  const before = text.slice(0, binary.index).split(/\r\n|\r|\n/);
  const code = binary[0].codePointAt(0)!.toString(16).padStart(2, '0');
  return { line: before.length, col: before[before.length - 1].length + 1, message: `not a YAML text file: control byte 0x${code}` };
}

export function loadYaml(source: string): LoadedYaml {
  const nothing = (problems: YamlProblem[]): LoadedYaml => ({ data: undefined, problems, locate: () => undefined });
  const binary = controlByteProblem(source);
  if (binary) return nothing([binary]);
  // A lone CR is a line break to PyYAML (and the YAML spec), not to the `yaml` library's lexer.
  // Same length, so every offset stays where it was.
  const text = source.replace(/\r(?!\n)/g, '\n');
  const deep = tooDeepAt(text, MAX_NESTING, MAX_FLOW_COLLECTIONS);
  if (deep?.tooMany) {
    return nothing([{ line: deep.line, col: deep.col, message: `opens more than ${MAX_FLOW_COLLECTIONS} flow lists or mappings ([ ], { }, '- - ' lines; a config holds a few dozen)` }]);
  }
  if (deep) return nothing([{ ...deep, message: `nested more than ${MAX_NESTING} lists or mappings deep (a config nests a few levels)` }]);
  const lineCounter = new LineCounter();
  const position = (offset: number): YamlPosition => lineCounter.linePos(offset);
  // uniqueKeys and merge off: both are done below, linear and as PyYAML does them.
  const parsed = parseAllDocuments(text, { lineCounter, uniqueKeys: false, merge: false, prettyErrors: false });
  const docs = Array.isArray(parsed) ? parsed : [];
  if (docs.length > 1) {
    const second = docs[1].range[0];
    const marker = text.lastIndexOf('---', second) >= docs[0].range[0] ? text.lastIndexOf('---', second) : second;
    return nothing([at(position(marker), `holds ${docs.length} YAML documents (the second starts here); a config is one document: remove the '---' line or split the file`)]);
  }
  const doc = docs[0];
  if (doc && doc.errors.length > 0) return nothing(doc.errors.slice(0, 20).map((err) => syntaxProblem(doc, err, position)));
  if (!doc || doc.contents === null) return nothing([{ line: 1, col: 1, message: 'the file is empty' }]);
  const build = new DataBuilder(position);
  const data = build.value(doc.contents as Node);
  if (build.problems.length === 0 && build.expanded - build.written > MAX_ALIAS_EXPANSION) {
    build.problems.push({ line: 1, col: 1, message: `its aliases expand it by ${build.expanded - build.written} values, more than the ${MAX_ALIAS_EXPANSION} taken (an alias bomb?)` });
  }
  if (build.problems.length > 0) return nothing(build.problems.slice(0, 20));
  return { data, problems: [], locate: (path) => locate(doc, build, path, position) };
}

interface YamlErrorLike {
  code: string;
  message: string;
  pos: [number, number];
}

/**
 * A syntax error where its cause starts: the library reports an unclosed quote where the text
 * ends; the user needs the line that opens it. The message is the library's first sentence
 * without its own "at line x, column y".
 */
function syntaxProblem(doc: Document, err: YamlErrorLike, position: (offset: number) => YamlPosition): YamlProblem {
  let message = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  let offset = err.pos[0];
  if (err.code === 'MISSING_CHAR' && /quote/.test(message)) {
    const opened = unclosedQuoteStart(doc, offset);
    if (opened !== undefined) {
      const quote = /(["'])quote/.exec(message)?.[1] ?? '"';
      message = `this ${quote} opens a quoted value that is never closed (the text ends at ${describeEnd(position(offset))})`;
      offset = opened;
    }
  } else if (err.code === 'BAD_INDENT' && /^Flow (sequence|map) in block collection/.test(message)) {
    const list = message.startsWith('Flow sequence');
    const opened = unclosedFlowStart(doc, offset, list);
    if (opened !== undefined) {
      message = `this ${list ? '[ opens a list' : '{ opens a mapping'} whose closing ${list ? ']' : '}'} is missing, or whose next line is not indented past its key (the list breaks off at ${describeEnd(position(offset))})`;
      if (!list) message = message.replace('the list breaks', 'the mapping breaks');
      offset = opened;
    }
  } else if (err.code === 'DUPLICATE_KEY') {
    message = 'duplicate key';
  } else if (err.code === 'RESOURCE_EXHAUSTION') {
    message = `lists or mappings nested too deeply to read (a config nests a few levels; at most ${MAX_NESTING} are taken)`;
  }
  return at(position(offset), message);
}

const describeEnd = (pos: YamlPosition) => `line ${pos.line}, column ${pos.col}`;

/** Every node under `node`, parents before children (a pair's key, then its value). */
function* nodesOf(node: unknown): Generator<unknown> {
  if (!node) return;
  if (isPair(node)) {
    yield* nodesOf(node.key);
    yield* nodesOf(node.value);
    return;
  }
  yield node;
  if (isMap(node) || isSeq(node)) for (const item of node.items) yield* nodesOf(item);
}

/** Start of the quoted scalar that reaches `end` unclosed. */
function unclosedQuoteStart(doc: Document, end: number): number | undefined {
  for (const node of nodesOf(doc.contents)) {
    if (!isScalar(node)) continue;
    const range = node.range;
    if (range && (node.type === Scalar.QUOTE_DOUBLE || node.type === Scalar.QUOTE_SINGLE) && range[0] < end && range[1] >= end) return range[0];
  }
  return undefined;
}

/** Start of the innermost flow list (or mapping) that breaks off at `end`: the last one met, parents first. */
function unclosedFlowStart(doc: Document, end: number, list: boolean): number | undefined {
  let found: number | undefined;
  for (const node of nodesOf(doc.contents)) {
    if (!(isMap(node) || isSeq(node))) continue;
    const range = node.range;
    if (node.flow && isSeq(node) === list && range && range[0] < end && range[1] >= end) found = range[0];
  }
  return found;
}

const isMergeKey = (key: unknown): boolean => isScalar(key) && key.value === '<<' && key.type === Scalar.PLAIN;

/** Keys as the data holds them: JavaScript object keys (null -> '', as the `yaml` library does). */
function keyString(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/** Sets a key, including one named __proto__ (a plain assignment would set the prototype). */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const SAFE_INTEGER_SOURCE = /^[-+]?(?:0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)$/;

/** Builds the data of a document from its nodes, once per node (aliases share the built value). */
class DataBuilder {
  readonly problems: YamlProblem[] = [];
  /** Values as written, and as the data holds them with every alias expanded. */
  written = 0;
  expanded = 0;
  private readonly built = new Map<Node, unknown>();
  private readonly expandedSize = new Map<Node, number>();
  private readonly inProgress = new Set<Node>();
  private readonly aliasTargets = new Map<Node, Node>();
  private depth = 0;
  /** Anchors defined so far, in document order: an alias names the latest one before it. */
  readonly anchors = new Map<string, Node>();
  /** Merge sources of each mapping, in the order a lookup must try them (see merged()). */
  readonly mergeSources = new Map<YAMLMap, YAMLMap[]>();

  constructor(private readonly position: (offset: number) => YamlPosition) {}

  private problem(node: Node | null | undefined, message: string): void {
    this.problems.push(at(this.position(node?.range?.[0] ?? 0), message));
  }

  /** The node an alias names, or undefined (with its problem) when it names nothing usable. */
  target(node: Node): Node | undefined {
    if (!isAlias(node)) return node;
    const target = this.anchors.get(node.source);
    if (!target) {
      this.problem(node, `*${node.source} names no anchor &${node.source} defined before it`);
      return undefined;
    }
    if (this.inProgress.has(target)) {
      const anchor = this.position(target.range?.[0] ?? 0);
      this.problem(node, `*${node.source} is inside the value it names (&${node.source} at line ${anchor.line}): a value cannot contain itself`);
      return undefined;
    }
    this.aliasTargets.set(node, target);
    return target;
  }

  value(node: Node | null | undefined): unknown {
    if (node === null || node === undefined) {
      this.written += 1;
      this.expanded += 1;
      return null;
    }
    if (isAlias(node)) {
      const target = this.target(node);
      if (!target) return null;
      this.expanded += this.expandedSize.get(target) ?? 1;
      return this.built.get(target);
    }
    if (node.anchor) this.anchors.set(node.anchor, node);
    const expandedBefore = this.expanded;
    this.written += 1;
    this.expanded += 1;
    let value: unknown;
    this.inProgress.add(node);
    this.depth += 1;
    if ((isMap(node) || isSeq(node)) && this.depth > MAX_NESTING) {
      if (!this.problems.some((p) => p.message.startsWith('nested more than'))) this.problem(node, `nested more than ${MAX_NESTING} lists or mappings deep (a config nests a few levels)`);
    } else if (isMap(node)) value = this.mapping(node as YAMLMap<ParsedNode, ParsedNode | null>);
    else if (isSeq(node)) value = this.sequence(node as YAMLSeq<ParsedNode>);
    else if (isScalar(node)) value = this.scalar(node);
    else this.problem(node, 'is not a YAML value');
    this.depth -= 1;
    this.inProgress.delete(node);
    this.built.set(node, value);
    this.expandedSize.set(node, this.expanded - expandedBefore);
    return value;
  }

  private scalar(node: Scalar): unknown {
    // An unquoted scalar without a tag means what PyYAML makes of it (YAML 1.1); a quoted or
    // tagged one is the library's (a quoted one is text in both).
    if (node.type === Scalar.PLAIN && node.tag === undefined && typeof node.source === 'string') {
      const resolved = resolvePlainScalar(node.source);
      if (resolved.problem !== undefined) this.problem(node, resolved.problem);
      return resolved.value;
    }
    const value = node.value;
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value) && node.type === Scalar.PLAIN && SAFE_INTEGER_SOURCE.test(node.source ?? '')) {
      this.problem(node, `${node.source} is a whole number beyond ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest held exactly here; it would be read as ${value}`);
    }
    return value;
  }

  private sequence(node: YAMLSeq<ParsedNode>): unknown[] {
    const out: unknown[] = [];
    for (const item of node.items) out.push(this.value(item));
    return out;
  }

  private mapping(node: YAMLMap<ParsedNode, ParsedNode | null>): Record<string, unknown> {
    // Every key and value is built in document order first: an anchor defined by an earlier
    // pair may be named by a later `<<`, and the other way round.
    const sources: YAMLMap[] = [];
    const own: Array<{ keyNode: Node | null; key: string; value: unknown }> = [];
    for (const pair of node.items) {
      if (isMergeKey(pair.key)) {
        this.value(pair.key as Node);
        sources.push(...this.mergeSourcesOf(pair));
        continue;
      }
      const keyNode = pair.key as Node | null;
      const keyTarget = keyNode && isAlias(keyNode) ? this.anchors.get(keyNode.source) : keyNode;
      if (keyTarget && (isMap(keyTarget) || isSeq(keyTarget))) {
        this.problem(keyNode, 'a key must be a single value, not a list or a mapping');
        continue;
      }
      const key = keyString(this.value(keyNode));
      own.push({ keyNode, key, value: this.value(pair.value as Node | null) });
    }
    const out: Record<string, unknown> = {};
    // PyYAML: the merged pairs first, in flatten order, a later one overriding; then the own keys.
    for (const source of sources) {
      const merged = this.built.get(source) as Record<string, unknown> | undefined;
      if (merged) for (const key of Object.keys(merged)) setKey(out, key, merged[key]);
    }
    if (sources.length > 0) this.mergeSources.set(node as YAMLMap, [...sources].reverse());
    const seen = new Map<string, Node | null>();
    for (const { keyNode, key, value } of own) {
      if (seen.has(key)) {
        const earlier = this.position(seen.get(key)?.range?.[0] ?? 0);
        this.problem(keyNode, `duplicate key '${key}' (first at line ${earlier.line}, column ${earlier.col}); a key may appear once in a mapping`);
        continue;
      }
      seen.set(key, keyNode);
      setKey(out, key, value);
    }
    return out;
  }

  /** The mappings one `<<` pair merges, in PyYAML's order (a list reversed), each built. */
  private mergeSourcesOf(pair: Pair<ParsedNode, ParsedNode | null>): YAMLMap[] {
    const valueNode = pair.value as Node | null;
    if (!valueNode) {
      this.problem(pair.key as Node, 'a merge key (<<) takes a mapping or a list of mappings, got nothing');
      return [];
    }
    const problemsBefore = this.problems.length;
    this.value(valueNode);
    if (this.problems.length > problemsBefore) return [];
    const resolved = this.resolved(valueNode);
    if (isMap(resolved)) return [resolved];
    if (isSeq(resolved)) {
      const maps: YAMLMap[] = [];
      for (const item of resolved.items as Array<Node | null>) {
        const map = item ? this.resolved(item) : item;
        if (!map || !isMap(map)) {
          this.problem(item ?? valueNode, `a merge key (<<) takes mappings, got ${map ? describeNode(map) : 'nothing'} in its list`);
          return [];
        }
        maps.push(map);
      }
      return maps.reverse();
    }
    this.problem(valueNode, `a merge key (<<) takes a mapping or a list of mappings, got ${describeNode(resolved)}`);
    return [];
  }

  /** The node an alias named when it was built (the node itself when not an alias). */
  private resolved(node: Node): Node {
    return isAlias(node) ? this.aliasTargets.get(node) ?? node : node;
  }
}

function describeNode(node: Node): string {
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return node.value === null ? 'nothing (null)' : `${typeof node.value} ${JSON.stringify(node.value)}`;
  return 'an alias';
}

/** Index of each mapping's own keys, made on the first lookup (a config with issues is small; a huge one looks up once per issue). */
const keyIndex = new WeakMap<YAMLMap, Map<string, Pair>>();

function ownPair(map: YAMLMap, key: string): Pair | undefined {
  let index = keyIndex.get(map);
  if (!index) {
    index = new Map();
    for (const pair of map.items) {
      if (isPair(pair) && isScalar(pair.key) && !isMergeKey(pair.key)) {
        const k = keyString(pair.key.value);
        if (!index.has(k)) index.set(k, pair);
      }
    }
    keyIndex.set(map, index);
  }
  return index.get(key);
}

/** The pair that gave `key` its value: the mapping's own, else its merge sources by precedence. */
function pairOf(map: YAMLMap, key: string, build: DataBuilder, depth = 0): Pair | undefined {
  const own = ownPair(map, key);
  if (own || depth > 64) return own;
  for (const source of build.mergeSources.get(map) ?? []) {
    const found = pairOf(source, key, build, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function locate(doc: Document, build: DataBuilder, path: YamlKeyPath, position: (offset: number) => YamlPosition): YamlPosition | undefined {
  const deref = (node: unknown): unknown => (isAlias(node) ? build.anchors.get(node.source) ?? node : node);
  let node: unknown = deref(doc.contents);
  let best: number | undefined = (node as Node | null)?.range?.[0];
  for (const key of path) {
    if (isMap(node)) {
      const pair = pairOf(node, String(key), build);
      if (!pair) break;
      best = (pair.key as Node | null)?.range?.[0] ?? best;
      node = deref(pair.value);
    } else if (isSeq(node) && typeof key === 'number' && node.items[key] !== undefined) {
      const item = node.items[key] as Node;
      best = item?.range?.[0] ?? best;
      node = deref(item);
    } else {
      break;
    }
  }
  return best === undefined ? undefined : position(best);
}
