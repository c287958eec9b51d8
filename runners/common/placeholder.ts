// A `<placeholder>` left in a committed config for the environment to fill (`<partition>`,
// `<container_image>`): the config layer fills it from its variable (framework/config/resolve.ts);
// a value still in this form when the job is built is one the environment never gave. One test of
// the form for the resolver, the jobs layer and the serving job builder.

const PLACEHOLDER = /^<[^<>]+>$/;

export function isPlaceholder(value: unknown): boolean {
  return typeof value === 'string' && PLACEHOLDER.test(value.trim());
}

/**
 * A string the config or the environment really gave, trimmed; undefined for a missing, blank or
 * still-`<placeholder>` value (an unfilled `<partition>` means the cluster's default, not a
 * partition by that name).
 */
export function filledValue(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' && !isPlaceholder(value) ? value.trim() : undefined;
}
