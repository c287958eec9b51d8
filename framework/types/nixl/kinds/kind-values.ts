// What the kinds' sections share: schema pieces (whole numbers, sizes written as bytes or with
// binary units, host/gpu memory, the section object itself), and the rules on sizes, on which
// memory a backend moves and on two-rank kinds.
import type { JsonSchema, KeyPath, RuleViolation } from '../../../contract/test-type.ts';
import { parseSize } from '../../../../runners/common/size.ts';

/** JSON Schema of a whole number of at least `minimum`. */
export const int = (minimum: number) => ({ type: 'integer', minimum });

/** The memory a kind's buffers live in. */
export const memorySchema = { enum: ['host', 'gpu'] };

/** JSON Schema of a kind's section: an object of exactly these keys, `required` among them. */
export function sectionSchema(properties: Record<string, unknown>, required?: string[]): JsonSchema {
  return { type: 'object', additionalProperties: false, ...(required ? { required } : {}), properties };
}

/** A size in a config: an integer (bytes) or a string with K/M/G (binary): 4096, "64M", "8GiB". */
export const sizeSchema = { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'string', pattern: '^\\d+(\\.\\d+)?([KkMmGg]([Ii][Bb])?|[Bb])?$' }] };

export function sizeBytes(value: number | string): number {
  return typeof value === 'number' ? value : parseSize(value);
}

/** Bytes of `value`, or a violation at `at` (e.g. a decimal that is not a whole number of bytes). */
export function checkSize(value: number | string | undefined, at: KeyPath, out: RuleViolation[]): number | undefined {
  if (value === undefined) return undefined;
  try {
    return sizeBytes(value);
  } catch (err) {
    out.push({ path: at, message: (err as Error).message });
    return undefined;
  }
}

/** shm moves host memory only, cuda and nccl GPU memory only, ucx host (and GPU when built with CUDA). */
export function checkBackendMemory(backend: string, memory: 'host' | 'gpu' | undefined, at: KeyPath, out: RuleViolation[]): void {
  if (memory === undefined) return;
  const only = backend === 'shm' ? 'host' : backend === 'cuda' || backend === 'nccl' ? 'gpu' : undefined;
  if (only && memory !== only) out.push({ path: at, message: `backend ${backend} moves ${only} memory only, not ${memory} memory` });
}

/** A kind whose two ranks play two roles (e.g. 'a sender and a receiver') runs exactly 2 ranks. */
export function checkTwoRanks(kind: string, roles: string, ranks: number, out: RuleViolation[]): void {
  if (ranks !== 2) out.push({ path: ['benchmark', 'ranks'], message: `${kind} runs 2 ranks (${roles}), not ${ranks}` });
}
