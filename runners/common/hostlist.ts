// SLURM host lists (`gpu[01-03,07],login1`, `r[1-2]-n[1-2]`) expanded to plain node names, in the
// order `scontrol show hostnames` gives them. Read by the scheduler (squeue's node lists) and inside
// allocations (SLURM_STEP_NODELIST: rank 0's node, the nodes of an EP run, a NIXL tool's master).
import { InputError } from './errors.ts';

/** What SLURM prints where a job has no nodes (yet). */
const EMPTY_LISTS = new Set(['', '(null)', 'None', 'None assigned', 'N/A']);

/** `n[1-3],login1` -> ['n1', 'n2', 'n3', 'login1']; empty markers (`None assigned`...) -> []. */
export function expandHostlist(list: string | undefined): string[] {
  const trimmed = (list ?? '').trim();
  if (EMPTY_LISTS.has(trimmed)) return [];
  const hosts: string[] = [];
  // One by one: a list like n[1-200000] must not be spread into a call (the stack has a limit).
  for (const part of splitTopLevel(trimmed)) for (const host of expandPattern(part, trimmed)) hosts.push(host);
  return hosts;
}

/** Splits on commas outside brackets; refuses brackets that do not pair up. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const ch = list[i];
    if (ch === '[' || ch === ']') {
      depth += ch === '[' ? 1 : -1;
      if (depth < 0 || depth > 1) throw new InputError(`host list "${list}" has an unexpected "${ch}" at character ${i + 1}`);
    } else if (ch === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new InputError(`host list "${list}" has a "[" without its "]"`);
  parts.push(list.slice(start));
  return parts.map((part) => part.trim()).filter(Boolean);
}

/** Expands the first bracket group of one host pattern, the rest (expanded once) after each index. */
function expandPattern(pattern: string, list: string): string[] {
  const open = pattern.indexOf('[');
  if (open < 0) return [pattern];
  const close = pattern.indexOf(']', open);
  const prefix = pattern.slice(0, open);
  const tails = expandPattern(pattern.slice(close + 1), list);
  const names: string[] = [];
  for (const range of pattern.slice(open + 1, close).split(',')) {
    const bounds = /^(\d+)(?:-(\d+))?$/.exec(range.trim());
    if (!bounds) throw new InputError(`bad host range "${range}" in host list "${list}" (expected N or N-M)`);
    const [, first, last = first] = bounds;
    if (Number(last) < Number(first)) throw new InputError(`host range "${range}" in host list "${list}" runs backwards`);
    const width = first.length; // n[01-10] keeps the zero padding
    for (let n = Number(first); n <= Number(last); n++) {
      const index = String(n).padStart(width, '0');
      for (const tail of tails) names.push(`${prefix}${index}${tail}`);
    }
  }
  return names;
}

/** The job step's nodes from srun's environment (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST); [] without. */
export function slurmStepNodes(env: Record<string, string | undefined>): string[] {
  const name = env.SLURM_STEP_NODELIST !== undefined ? 'SLURM_STEP_NODELIST' : 'SLURM_JOB_NODELIST';
  try {
    return expandHostlist(env[name]);
  } catch (err) {
    throw new InputError(`environment variable ${name}: ${(err as Error).message}`);
  }
}
