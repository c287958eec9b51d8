// Reading one config file: YAML with source positions, so every later error can name file:line:col.
// The YAML rules (merge keys, duplicate keys, recursive aliases, numbers) are runners/common/yaml-load.ts's,
// shared with the engine's own benchmark configs; the file is read by runners/common/read-file.ts.
import { FileReadError, READ_LIMITS, readRegularFileSync } from '../../runners/common/read-file.ts';
import { decodeYamlBytes, loadYaml } from '../../runners/common/yaml-load.ts';
import type { KeyPath } from '../contract/test-type.ts';
import type { ConfigIssue } from './issue.ts';

export interface SourcePosition {
  line: number;
  col: number;
}

export interface ParsedYaml {
  /** The plain data (aliases resolved, merge keys merged); undefined when the file does not parse. */
  data: unknown;
  /** Parse errors (syntax, tabs, duplicate keys, recursive aliases...), each with its position. */
  issues: ConfigIssue[];
  /** Position of the key (or, for array items, the value) at `path`; the closest ancestor if absent. */
  locate(path: KeyPath): SourcePosition | undefined;
}

/**
 * The largest config read (README "Configs"). Real configs are a few KiB (upstream's largest is
 * under 10 KiB). The YAML library spends 5-10 CPU seconds and up to 1 GB on 1 MiB of the costliest
 * shapes (a flow list of 500k items, 1 MiB of anchors and aliases); at 256 KiB every shape
 * bench/hostile-input.ts tries stays under 3 CPU seconds and 300 MB, so one wrong file cannot
 * stall a run or exhaust a shared machine's memory.
 */
export const MAX_CONFIG_BYTES = READ_LIMITS.config;

export function parseYaml(text: string, displayFile: string): ParsedYaml {
  const loaded = loadYaml(text);
  return {
    data: loaded.data,
    issues: loaded.problems.map((p) => ({ file: displayFile, line: p.line, col: p.col, message: p.message })),
    locate: loaded.locate,
  };
}

type Read<T extends string, V> = ({ [K in T]: V } & { issue?: undefined }) | ({ [K in T]?: undefined } & { issue: ConfigIssue });

const issueAt = (displayFile: string, message: string, line = 1, col = 1): { issue: ConfigIssue } => ({ issue: { file: displayFile, line, col, message } });

/**
 * A config file's bytes, or the one issue that makes it no file to parse: unreadable, not a
 * regular file (a FIFO would block the run forever), larger than MAX_CONFIG_BYTES.
 */
export function readConfigBytes(absFile: string, displayFile: string): Read<'bytes', Buffer> {
  try {
    return { bytes: readRegularFileSync(absFile, MAX_CONFIG_BYTES) };
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    if (err.code === 'not-regular') return issueAt(displayFile, `${err.reason.replace(/^is /, '')}; expected a YAML text file`);
    if (err.code === 'too-large') return issueAt(displayFile, `${err.reason.replace(/ read at most from such a file$/, '')} a config may be (real configs are a few KiB); not read`);
    return issueAt(displayFile, err.reason.replace(/no such file \(ENOENT\)$/, 'no such file (a link to nothing?) (ENOENT)'));
  }
}

/** Bytes as UTF-8 text, or the issue: UTF-16 or not UTF-8. A UTF-8 byte-order mark is dropped. */
export function decodeConfigBytes(bytes: Buffer, displayFile: string): Read<'text', string> {
  const decoded = decodeYamlBytes(bytes);
  if (decoded.problem) return issueAt(displayFile, decoded.problem.message, decoded.problem.line, decoded.problem.col);
  return { text: decoded.text };
}

/** A config file's text (readConfigBytes, then decodeConfigBytes), or the one issue that makes it none. */
export function readConfigText(absFile: string, displayFile: string): Read<'text', string> {
  const read = readConfigBytes(absFile, displayFile);
  return read.issue ? { issue: read.issue } : decodeConfigBytes(read.bytes, displayFile);
}

export function readYamlFileSync(absFile: string, displayFile: string): ParsedYaml {
  const read = readConfigText(absFile, displayFile);
  if (read.issue) return { data: undefined, issues: [read.issue], locate: () => undefined };
  return parseYaml(read.text, displayFile);
}
