import { describe, expect, it } from 'vitest';
import { identityOf, parseTestListEntry, pytestFunctionOf } from '../../framework/config/ids.ts';

describe('test ids', () => {
  it('names a config <type>_<category>_<stem>', () => {
    expect(identityOf('test_configs/disagg/perf/deepseek-r1-fp4_1k1k_ctx1_gen4_tep8_bs32_eplb0_mtp0_ccb-NIXL.yaml')).toEqual({
      id: 'disagg_perf_deepseek-r1-fp4_1k1k_ctx1_gen4_tep8_bs32_eplb0_mtp0_ccb-NIXL',
      testType: 'disagg',
      category: 'perf',
      stem: 'deepseek-r1-fp4_1k1k_ctx1_gen4_tep8_bs32_eplb0_mtp0_ccb-NIXL',
    });
    expect(identityOf('test_configs/disagg/x.yaml')).toBeUndefined();
    expect(identityOf('other/disagg/perf/x.yaml')).toBeUndefined();
  });

  it('reads bare ids as written and upstream\'s pytest node ids, naming their function', () => {
    expect(parseTestListEntry('disagg_perf_a')).toEqual({ id: 'disagg_perf_a' });
    expect(parseTestListEntry('test_disagg.py::TestDisaggBenchmark::test_benchmark[disagg_perf_a-b_c]')).toEqual({ id: 'disagg_perf_a-b_c', nodeFunction: 'test_benchmark' });
    expect(parseTestListEntry('perf/disagg/test_disagg.py::TestDisaggBenchmark::test_accuracy[wideep_accuracy_x]')).toEqual({ id: 'wideep_accuracy_x', nodeFunction: 'test_accuracy' });
    // Not upstream's node id (another file or class): no id is guessed out of it.
    for (const line of ['test_other.py::TestDisaggBenchmark::test_benchmark[disagg_perf_a]', 'test_disagg.py::Other::test_benchmark[disagg_perf_a]', 'x::y[disagg_perf_a]']) {
      expect(parseTestListEntry(line)).toEqual({ id: line, problem: expect.stringMatching(/^not a node id of upstream's test_disagg\.py/) });
    }
  });

  it('the pytest function per category: upstream\'s test_disagg.py', () => {
    expect(['perf', 'accuracy', 'stress', 'perf-sanity'].map(pytestFunctionOf)).toEqual(['test_benchmark', 'test_accuracy', 'test_stress', 'test_benchmark']);
  });
});
