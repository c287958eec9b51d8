// Environment overrides, with one documented precedence:
//   1. a value that is missing, empty or a `<placeholder>` is filled from its variable when set;
//   2. an explicit YAML value wins over the variable...
//   3. ...unless the variable is forced: DISAGG_FORCE_ENV=SLURM_PARTITION,CONTAINER_IMAGE (or `all`).
// (The Python framework overwrote explicit values although its docstring said it would not.)
import type { EnvOverride, KeyPath } from '../contract/test-type.ts';
import { formatKeyPath } from './issue.ts';
import { isPlaceholder } from '../../runners/common/placeholder.ts';

export interface AppliedOverride {
  path: string;
  env: string;
  value: string;
  /** Why the variable was used: the YAML value was absent/placeholder, or the variable is forced. */
  because: 'unset' | 'placeholder' | 'forced';
}

export interface ResolvedConfig {
  config: Record<string, unknown>;
  applied: AppliedOverride[];
  /** Values still `<placeholder>` after resolution (path -> value). */
  placeholders: Array<{ path: string; value: string }>;
}

export function forcedVariables(env: NodeJS.ProcessEnv): Set<string> | 'all' {
  const raw = env.DISAGG_FORCE_ENV?.trim() ?? '';
  if (raw === 'all' || raw === '1') return 'all';
  return new Set(raw.split(/[\s,]+/).filter(Boolean));
}

export function resolveConfig(
  config: Record<string, unknown>,
  overrides: EnvOverride[],
  env: NodeJS.ProcessEnv = process.env,
): ResolvedConfig {
  const resolved = structuredClone(config);
  const forced = forcedVariables(env);
  const applied: AppliedOverride[] = [];
  for (const override of overrides) {
    const raw = env[override.env];
    if (raw === undefined || raw === '') continue;
    const current = getIn(resolved, override.path);
    const because: AppliedOverride['because'] | undefined =
      current === undefined || current === null || current === ''
        ? 'unset'
        : isPlaceholder(current)
          ? 'placeholder'
          : forced === 'all' || forced.has(override.env)
            ? 'forced'
            : undefined;
    if (!because) continue;
    const value = override.compose ? override.compose(raw, resolved) : raw;
    if (value === undefined) continue;
    setIn(resolved, override.path, value);
    applied.push({ path: formatKeyPath(override.path), env: override.env, value, because });
  }
  return { config: resolved, applied, placeholders: findPlaceholders(resolved, []) };
}

export function getIn(root: unknown, path: KeyPath): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

function setIn(root: Record<string, unknown>, path: KeyPath, value: unknown): void {
  let node: Record<string | number, unknown> = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object') node[key] = {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[path[path.length - 1]] = value;
}

/** Every placeholder value in the config, with its key path; one walk, one path stack (configs are read by the thousand). */
function findPlaceholders(root: unknown, path: KeyPath): Array<{ path: string; value: string }> {
  const found: Array<{ path: string; value: string }> = [];
  const at = [...path];
  const walk = (node: unknown): void => {
    if (isPlaceholder(node)) {
      found.push({ path: formatKeyPath(at), value: String(node) });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        at.push(i);
        walk(node[i]);
        at.pop();
      }
      return;
    }
    for (const key of Object.keys(node)) {
      at.push(key);
      walk((node as Record<string, unknown>)[key]);
      at.pop();
    }
  };
  walk(root);
  return found;
}
