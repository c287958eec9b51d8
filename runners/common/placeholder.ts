// A `<placeholder>` left in a committed config for the environment to fill (`<partition>`,
// `<container_image>`): the config layer fills it from its variable (framework/config/resolve.ts);
// a value still in this form when the job is built is one the environment never gave. One test of
// the form for the resolver, the jobs layer and the serving job builder.

const PLACEHOLDER = /^<[^<>]+>$/;

export function isPlaceholder(value: unknown): boolean {
  return typeof value === 'string' && PLACEHOLDER.test(value.trim());
}
