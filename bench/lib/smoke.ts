// `--smoke` on any benchmark's command line: the script runs with tiny sizes (seconds), so that a
// benchmark that no longer runs fails the test suite (tests/bench/smoke.test.ts), and keeps no
// figure (appendResult writes nothing). Options given beside --smoke still win over its sizes.
export const smoke = process.argv.slice(2).includes('--smoke');

/** The arguments a benchmark parses: under --smoke, its tiny sizes first, then the rest of its command line. */
export function benchArgs(tinySizes: string[]): string[] {
  const given = process.argv.slice(2);
  return smoke ? [...tinySizes, ...given.filter((a) => a !== '--smoke')] : given;
}
