// One vocabulary for where a test stands (framework/results/test-states.ts): the live progress,
// the digest (terminal, summary.md, summary.json), results.json's verdicts, the report and the
// full metric listing say each state with the same word, and docs/report.md prints the same table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { END_STATES, STATE_WORDS, TEST_STATES } from '../../framework/results/test-states.ts';
import { formatTestLine } from '../../framework/results/progress-format.ts';
import { buildDigest } from '../../framework/results/digest/digest.ts';
import { digestMarkdown, digestTerminal } from '../../framework/results/digest/digest-text.ts';
import { renderReport } from '../../framework/results/report/render.ts';
import { formatMetricsTable } from '../../framework/suite/metrics-table.ts';
import { recordProblem } from '../../framework/results/record-check.ts';
import { recordsOf } from '../fixtures/report/two-runs.ts';

const repo = path.resolve(import.meta.dirname, '../..');

describe('the words for a test\'s state', () => {
  it('the live progress prints each state with its word', () => {
    for (const state of TEST_STATES) expect(formatTestLine({ testId: 't', phase: state, since: 0, changed: 0 }, 0)).toMatch(new RegExp(`^${STATE_WORDS[state].word} +t`));
  });

  it('the digest, summary.md and summary.json end a test with the same words; the listing too', () => {
    const [passed, failed, skipped] = recordsOf(1);
    const digest = buildDigest({
      tests: [{ testId: passed.testId, record: passed }, { testId: failed.testId, record: failed }, { testId: skipped.testId, record: skipped }, { testId: 'cut', interrupted: 'the run was interrupted (SIGINT)' }],
      files: { results: 'r', summaryMd: 'm', summaryJson: 'j' },
    });
    expect(digest.tests.map((t) => t.verdict)).toEqual(['passed', 'failed', 'skipped', 'not run']);
    const terminal = digestTerminal(digest);
    const markdown = digestMarkdown(digest);
    for (const t of digest.tests) {
      const word = STATE_WORDS[t.verdict].word;
      expect(terminal).toMatch(new RegExp(`^${word} +${t.testId} `, 'm'));
      expect(markdown).toContain(`| ${word} | ${t.testId} |`);
    }
    const listing = formatMetricsTable(digest.tests.map((t) => ({ id: t.testId, state: t.verdict, jobState: '-', metrics: [] })));
    for (const t of digest.tests) expect(listing).toContain(`${STATE_WORDS[t.verdict].word}  ${t.testId}  [job -]`);
  });

  it('results.json holds the verdicts of the table, and the report filters by them', () => {
    const recordable = END_STATES.filter((s) => s !== 'not run');
    const [passed] = recordsOf(1);
    for (const verdict of recordable) expect(recordProblem({ ...passed, verdict })).toBeUndefined();
    expect(recordProblem({ ...passed, verdict: 'not run' })).toMatch(/^verdict is "not run", expected/);
    const html = renderReport({ records: recordsOf(1) }).html;
    const options = [...(/<select id="verdict-filter"[^>]*>(.*?)<\/select>/.exec(html)?.[1] ?? '').matchAll(/<option>([^<]+)<\/option>/g)].map((m) => m[1]);
    expect(options).toEqual(recordable);
  });

  it('docs/report.md prints the same table', () => {
    const doc = readFileSync(path.join(repo, 'docs/report.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z ]+)` \| `([A-Z ]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual(TEST_STATES.map((s) => [s, STATE_WORDS[s].word, STATE_WORDS[s].means]));
  });
});
