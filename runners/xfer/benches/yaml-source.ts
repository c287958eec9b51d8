// A benchmark's YAML config with the position of every key, so a bad value is reported as
// `file:line:col key.path: problem`. (The engine depends on nothing in framework/; the file is read
// and parsed by the neutral runners/common modules the framework's config loader uses too, so
// merge keys, duplicate keys and recursive aliases mean the same in every config.)
import { FileReadError, READ_LIMITS, readRegularFileSync } from '../../common/read-file.ts';
import { decodeYamlBytes, loadYaml } from '../../common/yaml-load.ts';
import { XferError } from '../errors.ts';
import type { ErrorCategory } from '../../common/errors.ts';

export type KeyPath = (string | number)[];

/** A benchmark config that cannot be used; the message names file, line, column and key. */
export class BenchConfigError extends XferError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'BenchConfigError';
}

export interface YamlSource {
  file: string;
  data: unknown;
  /** `file:line:col key.path` of a key (or its closest ancestor that exists). */
  where(path: KeyPath): string;
  /** A BenchConfigError located at `path`. */
  error(path: KeyPath, message: string): BenchConfigError;
}

export function readYamlSource(file: string): YamlSource {
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(file, READ_LIMITS.config);
  } catch (err) {
    if (err instanceof FileReadError) throw new BenchConfigError(`${file}: ${err.reason}`);
    throw err;
  }
  const decoded = decodeYamlBytes(bytes);
  const loaded = decoded.problem ? { problems: [decoded.problem], data: undefined, locate: () => undefined } : loadYaml(decoded.text);
  if (loaded.problems.length > 0) {
    const e = loaded.problems[0];
    throw new BenchConfigError(`${file}:${e.line}:${e.col} ${e.message}`);
  }
  const where = (path: KeyPath) => {
    const pos = loaded.locate(path);
    return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}${path.length ? ` ${formatPath(path)}` : ''}`;
  };
  return { file, data: loaded.data, where, error: (path, message) => new BenchConfigError(`${where(path)}: ${message}`) };
}

/** traffic_patterns[2].shards */
export function formatPath(path: KeyPath): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}
