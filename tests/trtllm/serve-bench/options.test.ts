import { describe, expect, it } from 'vitest';
import { parseServeBenchArgs } from '../../../runners/trtllm/serve-bench/options.ts';
import { UsageError } from '../../../runners/common/errors.ts';

describe('serve-bench options', () => {
  it('defaults to benchmark_serving\'s values, with every latency section printed', () => {
    const o = parseServeBenchArgs(['--model', 'm']);
    expect(o.url.href).toBe('http://127.0.0.1:8000/v1/completions');
    expect(o).toMatchObject({
      backend: 'openai', api: 'completions', numPrompts: 1000, maxConcurrency: null, inputLen: 1024, outputLen: 128,
      rangeRatio: 0, seed: null, ignoreEos: false, metricPercentiles: [99], saveResult: null, requestTimeoutS: 21600,
    });
    expect(o.percentileMetrics).toEqual(['ttft', 'tpot', 'itl', 'e2el']);
  });

  it('takes a benchmark_serving command line as the job script writes it', () => {
    const o = parseServeBenchArgs([
      '--backend', 'openai', '--model', 'DeepSeek-R1', '--host', 'node-3', '--port', '8333', '--dataset-name', 'random',
      '--random-input-len', '1024', '--random-output-len', '2048', '--num-prompts', '64', '--max-concurrency', '32',
      '--ignore-eos', '--no-test-input', '--save-result', '--result-dir', '/logs/x', '--result-filename', 'c32.json',
      '--percentile-metrics', 'e2el,ttft', '--metric-percentiles', '50,90,99.9', '--tokenizer', '/models/r1', '--seed', '7',
    ]);
    expect(o.url.href).toBe('http://node-3:8333/v1/completions');
    expect(o).toMatchObject({ model: 'DeepSeek-R1', inputLen: 1024, outputLen: 2048, numPrompts: 64, maxConcurrency: 32, ignoreEos: true, seed: 7 });
    expect(o.saveResult).toBe('/logs/x/c32.json');
    // Sections always print in the block's order, whatever the order asked.
    expect(o.percentileMetrics).toEqual(['ttft', 'e2el']);
    expect(o.metricPercentiles).toEqual([50, 90, 99.9]);
    expect(o.ignored).toEqual(['--no-test-input', '--tokenizer /models/r1']);
  });

  it('builds the URL from --base-url and --endpoint, and picks chat from the backend', () => {
    expect(parseServeBenchArgs(['--model', 'm', '--base-url', 'http://h:9/', '--endpoint', 'v1/completions']).url.href).toBe('http://h:9/v1/completions');
    const chat = parseServeBenchArgs(['--model', 'm', '--backend', 'openai-chat', '--port', '1']);
    expect(chat.url.href).toBe('http://127.0.0.1:1/v1/chat/completions');
    expect(chat.api).toBe('chat');
    expect(parseServeBenchArgs(['--model', 'm', '--endpoint', '/v1/chat/completions']).api).toBe('chat');
  });

  it('takes the result file after --save-result, as --save-result=FILE, or from the flag alone', () => {
    expect(parseServeBenchArgs(['--model', 'm', '--save-result', 'out.json']).saveResult).toBe('out.json');
    expect(parseServeBenchArgs(['--model', 'm', '--save-result=o.json', '--ignore-eos']).saveResult).toBe('o.json');
    const flag = parseServeBenchArgs(['--model', 'org/m', '--save-result', '--max-concurrency', '4']).saveResult;
    expect(flag).toMatch(/^openai-infqps-concurrency4-m-\d{8}-\d{6}\.json$/);
  });

  it.each([
    [['--num-prompts', '4'], /--model is required/],
    [['--model', 'm', '--bogus'], /unknown option "--bogus"/],
    [['--model', 'm', '--num-prompts'], /--num-prompts needs a value/],
    [['--model', 'm', '--num-prompts', '0'], /--num-prompts must be an integer >= 1, got "0"/],
    [['--model', 'm', '--max-concurrency', '2.5'], /--max-concurrency must be an integer/],
    [['--model', 'm', '--dataset-name', 'sharegpt'], /only "random" is supported/],
    [['--model', 'm', '--request-rate', '10'], /only "inf"/],
    [['--model', 'm', '--backend', 'tgi'], /--backend must be openai or openai-chat/],
    [['--model', 'm', '--percentile-metrics', 'ttft,latency'], /unknown metric "latency"/],
    [['--model', 'm', '--metric-percentiles', '99,101'], /"101" is not a percentile/],
    [['--model', 'm', '--random-range-ratio', '1'], /in \[0, 1\)/],
    [['--model', 'm', '--base-url', 'ftp://h'], /must be http or https/],
    [['--model', 'm', '--base-url', 'not a url'], /not a valid endpoint URL/],
    [['--model', 'm', '--ignore-eos=yes'], /--ignore-eos takes no value/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseServeBenchArgs(argv)).toThrow(UsageError);
    expect(() => parseServeBenchArgs(argv)).toThrow(message);
  });
});
