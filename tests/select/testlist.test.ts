import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeUnknownIds, readTestList, selectByTestList } from '../../framework/select/testlist.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'testlist-'));

describe('test lists', () => {
  it('keeps listed order, accepts both id forms, reports unknown ids by line', () => {
    writeFileSync(
      path.join(dir, 'a.txt'),
      ['# nightly', '', 'disagg_perf_b', 'test_disagg.py::TestDisaggBenchmark::test_benchmark[disagg_perf_a]  # node id', 'disagg_perf_zzz', 'disagg_perf_b'].join('\n'),
    );
    const list = readTestList('a.txt', dir);
    expect(list.ids).toEqual(['disagg_perf_b', 'disagg_perf_a', 'disagg_perf_zzz']);
    const items = [{ id: 'disagg_perf_a' }, { id: 'disagg_perf_b' }, { id: 'disagg_perf_c' }];
    const selection = selectByTestList(items, list);
    expect(selection.selected.map((i) => i.id)).toEqual(['disagg_perf_b', 'disagg_perf_a']);
    expect(selection.unknown).toEqual([{ id: 'disagg_perf_zzz', line: 5 }]);
  });

  it('pytest node ids exact: the function of the test\'s category (upstream compares node ids as strings); anything else is an unknown id, saying why', () => {
    writeFileSync(path.join(dir, 'nodes.txt'), [
      'test_disagg.py::TestDisaggBenchmark::test_accuracy[disagg_accuracy_a]',
      'test_disagg.py::TestDisaggBenchmark::test_stress[disagg_stress_s]',
      'test_disagg.py::TestDisaggBenchmark::test_benchmark[disagg_accuracy_b]',
      'conftest.py::TestDisaggBenchmark::test_benchmark[disagg_perf_p]',
      'folder/disagg_perf_p',
      'disagg_perf_p',
    ].join('\n'));
    const list = readTestList('nodes.txt', dir);
    const items = [
      { id: 'disagg_accuracy_a', category: 'accuracy' }, { id: 'disagg_accuracy_b', category: 'accuracy' },
      { id: 'disagg_stress_s', category: 'stress' }, { id: 'disagg_perf_p', category: 'perf' },
    ];
    const selection = selectByTestList(items, list);
    expect(selection.selected.map((i) => i.id)).toEqual(['disagg_accuracy_a', 'disagg_stress_s', 'disagg_perf_p']);
    expect(selection.unknown).toEqual([
      { id: 'disagg_accuracy_b', line: 3, why: 'category accuracy: its node id is test_disagg.py::TestDisaggBenchmark::test_accuracy[disagg_accuracy_b], not test_benchmark[...]' },
      { id: 'conftest.py::TestDisaggBenchmark::test_benchmark[disagg_perf_p]', line: 4, why: expect.stringMatching(/^not a node id of upstream's test_disagg\.py/) },
      { id: 'folder/disagg_perf_p', line: 5 },
    ]);
    expect(describeUnknownIds(list, selection.unknown)).toContain('nodes.txt:3 disagg_accuracy_b (category accuracy: its node id is');
  });

  it('refuses a missing or empty list', () => {
    expect(() => readTestList('missing.txt', dir)).toThrow(/^DISAGG_TEST_LIST="missing\.txt" \(.*missing\.txt\) cannot be read: no such file \(ENOENT\); expected a file with one test id per line, relative to WORK_DIR$/);
    writeFileSync(path.join(dir, 'empty.txt'), '# nothing\n\n');
    expect(() => readTestList('empty.txt', dir)).toThrow(/no test ids/);
  });

  it('reads a list saved on Windows: CRLF line ends and a byte-order mark', () => {
    writeFileSync(path.join(dir, 'windows.txt'), '\uFEFFdisagg_perf_a\r\n# comment\r\ndisagg_perf_b\r\n');
    const list = readTestList('windows.txt', dir);
    expect(list.ids).toEqual(['disagg_perf_a', 'disagg_perf_b']);
    expect(selectByTestList([{ id: 'disagg_perf_a' }, { id: 'disagg_perf_b' }], list).unknown).toEqual([]);
  });

  it('refuses a folder and a UTF-16 file, saying which', () => {
    mkdirSync(path.join(dir, 'a-folder'), { recursive: true });
    expect(() => readTestList('a-folder', dir)).toThrow(/^DISAGG_TEST_LIST="a-folder" \(.*\) is a folder; expected a file with one test id per line$/);
    writeFileSync(path.join(dir, 'utf16.txt'), Buffer.from('\uFEFFdisagg_perf_a\n', 'utf16le'));
    expect(() => readTestList('utf16.txt', dir)).toThrow(/holds NUL bytes: not a text file \(UTF-16\?\)/);
  });

  it('refuses a FIFO (never opened for a blocking read) and /dev/zero (never read) in one sentence', () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo.txt')]);
    expect(() => readTestList('fifo.txt', dir)).toThrow(/^DISAGG_TEST_LIST="fifo\.txt" \(.*\) is a FIFO; expected a file with one test id per line$/);
    expect(() => readTestList('/dev/zero', dir)).toThrow(/^DISAGG_TEST_LIST="\/dev\/zero" \(\/dev\/zero\) is a character device; expected a file with one test id per line$/);
  });

  it('reads a list of 100,000 lines, and names only the first 20 unknown ids with a count of the rest', () => {
    const ids = Array.from({ length: 100_000 }, (_, i) => `disagg_perf_t${i}`);
    writeFileSync(path.join(dir, 'huge.txt'), `${ids.join('\n')}\n`);
    const list = readTestList('huge.txt', dir);
    expect(list.ids).toHaveLength(100_000);
    const selection = selectByTestList([{ id: 'disagg_perf_t99999' }, { id: 'disagg_perf_t7' }], list);
    expect(selection.selected.map((s) => s.id)).toEqual(['disagg_perf_t7', 'disagg_perf_t99999']);
    const message = describeUnknownIds(list, selection.unknown);
    expect(message.split('\n')).toHaveLength(22);
    expect(message).toMatch(/^these 99998 ids match no config:\n {2}huge\.txt:1 disagg_perf_t0\n/);
    expect(message).toMatch(/\n {2}\.\.\. and 99978 more$/);
  });
});
