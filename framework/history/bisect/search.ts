// The search of a bisection, as git bisect searches: candidates in order (the commits after the good
// one up to the bad one, or the refs or images a user lists), the state before the first known
// good; each step measures the untested candidate nearest the middle of the range still open,
// and a good step moves the range's start past it, a bad one its end to it. A candidate that
// cannot be measured (its test fails) is skipped, as `git bisect skip`: the next nearest is tried,
// and when only skipped candidates separate the last good from the first bad, all of them are
// named. When the range closes on a last candidate that is bad only by the values given for it
// (the bad run's) and was not measured, that candidate is measured once before it is named: a bad
// run that does not reproduce means there is nothing to find. A step that cannot tell good from bad
// within its budget ('unsure') ends the search: the first bad candidate is then somewhere in the
// range still open, which the outcome names.

export type Mark = 'good' | 'bad' | 'skip' | 'unsure';

export interface SearchOutcome {
  /** Index of the first bad candidate; undefined when none is bad. */
  firstBad?: number;
  /** Skipped candidates that may be the first bad one instead (before firstBad, or before the end when none was found). */
  maybe: number[];
  /** Candidates measured, in order. */
  measured: number[];
  /** The search stopped at a step that could not tell: the first bad candidate is after `after` (-1: any) and at or before `upTo`. */
  unsure?: { index: number; after: number; upTo: number };
}

export interface SearchInput {
  /** Number of candidates. */
  count: number;
  /** The last candidate is the bad reference itself (its values are given): it is measured only to confirm it. */
  lastIsBad: boolean;
  /** The last candidate (the bad reference) was measured bad already: it is not measured again. */
  lastMeasured?: boolean;
  /** Measures candidate `index`. */
  test: (index: number) => Promise<Mark>;
}

export async function search(input: SearchInput): Promise<SearchOutcome> {
  const { count } = input;
  let lo = -1;
  let hi = input.lastIsBad ? count - 1 : count;
  let hiMeasured = input.lastMeasured === true;
  const skipped = new Set<number>();
  const measured: number[] = [];
  const mark = async (index: number) => {
    measured.push(index);
    return input.test(index);
  };
  for (;;) {
    const open = [];
    for (let k = lo + 1; k < hi; k++) if (!skipped.has(k)) open.push(k);
    if (open.length === 0) break;
    const middle = (lo + hi) / 2;
    const next = open.reduce((best, k) => (Math.abs(k - middle) < Math.abs(best - middle) ? k : best));
    const result = await mark(next);
    if (result === 'unsure') return { maybe: [], measured, unsure: { index: next, after: lo, upTo: hi } };
    if (result === 'skip') skipped.add(next);
    else if (result === 'good') lo = next;
    else {
      hi = next;
      hiMeasured = true;
    }
  }
  if (input.lastIsBad && hi === count - 1 && !hiMeasured && count > 0) {
    const result = await mark(hi);
    if (result === 'unsure') return { maybe: [], measured, unsure: { index: hi, after: lo, upTo: hi } };
    if (result === 'good') lo = hi = count;
    else if (result === 'skip') skipped.add(hi);
  }
  const maybe = [...skipped].filter((k) => k > lo && k < hi).sort((a, b) => a - b);
  return { ...(hi < count ? { firstBad: hi } : {}), maybe, measured };
}
