// A problem found in a config file, located as file:line:col and key path.
import type { KeyPath } from '../types/test-type.ts';

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
export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'ConfigError';
    // The user's file is the place to look, not the framework's code: no stack frames, so Vitest
    // shows the located issues alone, without a code frame of the suite.
    this.stack = `${this.name}: ${this.message}`;
  }
}
