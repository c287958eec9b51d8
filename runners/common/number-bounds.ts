// Bounds of numbers a config gives, each with its reason: a value beyond what
// the machine can honour is refused at validation, in one sentence, instead of being rounded,
// wrapped or waited on for ever. Every type's schema gets the whole-number bound (config/validate.ts
// adds it to each `type: integer`); a schema names the others where it has such a value.

/** Reason a bounded schema gives in its message (`<value> is more than <limit>, <reason>`). */
export const BOUND_REASON = 'x-bound-reason';

/** The largest whole number a JavaScript number holds exactly; above it 2^53 + 1 reads as 2^53. */
export const SAFE_INTEGER_REASON = 'the largest whole number held exactly (2^53 - 1)';

/** Node's timers wait at most 2^31 - 1 ms; a longer delay fires after 1 ms instead (with a warning). */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);
export const TIMER_REASON = 'the longest a timer can wait (2^31 - 1 ms, 24.8 days)';

/** A duration in seconds, > `exclusiveMinimum`, that a timer of the framework or a rank waits for. */
export function secondsSchema(options: { integer?: boolean; minimum?: number } = {}): Record<string, unknown> {
  return {
    type: options.integer ? 'integer' : 'number',
    ...(options.minimum === undefined ? { exclusiveMinimum: 0 } : { minimum: options.minimum }),
    maximum: MAX_TIMER_SECONDS,
    [BOUND_REASON]: TIMER_REASON,
  };
}
