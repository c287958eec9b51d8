// A problem found in a config file, located as file:line:col and key path.
import type { KeyPath } from '../contract/test-type.ts';
import { DisaggBenchError } from '../../runners/common/errors.ts';
import type { ErrorCategory } from '../../runners/common/errors.ts';

export interface ConfigIssue {
  /** Path as the user should see it (relative to WORK_DIR when inside it). */
  file: string;
  line?: number;
  col?: number;
  /** Dotted key path, e.g. worker_config.gen.max_num_tokens; empty for whole-file problems. */
  path?: string;
  message: string;
}

/** `file:line:col path: message`, the one format every config error is shown in. */
export function formatIssue(issue: ConfigIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}:${issue.col ?? 1}`;
  return issue.path ? `${where} ${issue.path}: ${issue.message}` : `${where} ${issue.message}`;
}

/** worker_config.gen.max_num_tokens, or items[3].name for array indices. */
export function formatKeyPath(path: KeyPath): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${key}` : key;
  }
  return out;
}

/** An error that carries every issue of a config, shown one per line. */
export class ConfigError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  constructor(readonly issues: ConfigIssue[]) {
    // The file and place of the first issue (every issue says its own on its line).
    const first = issues[0];
    const place = first && (first.line === undefined ? first.path : `${first.line}:${first.col ?? 1}${first.path ? ` ${first.path}` : ''}`);
    super(issues.map(formatIssue).join('\n'), { file: first?.file, place: place || undefined });
    this.name = 'ConfigError';
    // The user's file is the place to look, not the framework's code: no stack frames, so Vitest
    // shows the located issues alone, without a code frame of the suite.
    this.stack = `${this.name}: ${this.message}`;
  }
}
