// serve-bench against the STAND-IN OpenAI server (tests/fixtures): the real client, real HTTP on
// loopback, the server's fake tokens. Counts are compared with what the stand-in says it served.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseServingLog } from '../../framework/metrics/extractors/serving.ts';
import { serveBenchMain } from '../../runners/trtllm/serve-bench/main.ts';
import { freePort } from '../../runners/common/free-port.ts';
import { startStandinServer, type StandinServer, type StandinServerOptions } from '../fixtures/standin-openai-server.ts';

const repoRoot = join(import.meta.dirname, '../..');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function standin(options: StandinServerOptions = {}): Promise<StandinServer> {
  const server = await startStandinServer(options);
  cleanups.push(() => server.close());
  return server;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'serve-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface BenchRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The block read back by the serving extractor: metric name -> value. */
  metrics: Map<string, number>;
  problems: string[];
}

async function bench(port: number, args: string[]): Promise<BenchRun> {
  let stdout = '';
  let stderr = '';
  const argv = ['--model', 'standin-model', '--port', String(port), '--seed', '1', ...args];
  const code = await serveBenchMain(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  // Wrapped in the job script's markers, as it lands in 6_bench.log.
  const log = `Benchmarking with concurrency 4 ... 0 prompts\n${stdout}Benchmark with concurrency 4 done\n`;
  const parsed = parseServingLog(log);
  const metrics = new Map((parsed.results[0]?.metrics ?? []).map((m) => [m.name, m.value]));
  return { code, stdout, stderr, metrics, problems: parsed.problems };
}


describe('serve-bench against the stand-in server', () => {
  it('reports the tokens the server served, at the asked concurrency, with sane statistics', async () => {
    const server = await standin({ firstTokenDelayMs: 20, tokenDelayMs: 1 });
    const out = join(await tempDir(), 'result.json');
    const run = await bench(server.port, [
      '--num-prompts', '40', '--max-concurrency', '8', '--random-input-len', '30', '--random-output-len', '12',
      '--ignore-eos', '--metric-percentiles', '50,90,99', '--save-result', out, '--save-detailed',
    ]);
    expect(run.code).toBe(0);
    expect(run.problems).toEqual([]);
    const served = server.stats();
    expect(served).toMatchObject({ requests: 40, completed: 40, maxInFlight: 8, promptTokens: 1200, completionTokens: 480 });
    expect(run.metrics.get('SERVER_SUCCESSFUL_REQUESTS')).toBe(40);
    expect(run.metrics.get('SERVER_FAILED_REQUESTS')).toBe(0);
    expect(run.metrics.get('SERVER_TOTAL_INPUT_TOKENS')).toBe(served.promptTokens);
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(served.completionTokens);
    for (const name of ['TTFT', 'TPOT', 'ITL', 'E2EL']) {
      for (const stat of ['MEAN', 'MEDIAN', 'STD', 'MIN', 'MAX', 'P50', 'P90', 'P99']) expect(run.metrics.has(`SERVER_${stat}_${name}`)).toBe(true);
    }

    const json = JSON.parse(await readFile(out, 'utf8'));
    expect(json).toMatchObject({ completed: 40, failed: 0, total_input_tokens: 1200, total_output_tokens: 480, max_concurrency: 8, seed: 1 });
    expect(json.token_counts_from_usage).toEqual({ prompt: 40, completion: 40 });
    for (const m of ['ttft', 'tpot', 'itl', 'e2el']) {
      expect(json[`min_${m}_ms`]).toBeLessThanOrEqual(json[`p50_${m}_ms`]);
      expect(json[`p50_${m}_ms`]).toBe(json[`median_${m}_ms`]);
      expect(json[`p50_${m}_ms`]).toBeLessThanOrEqual(json[`p90_${m}_ms`]);
      expect(json[`p90_${m}_ms`]).toBeLessThanOrEqual(json[`p99_${m}_ms`]);
      expect(json[`p99_${m}_ms`]).toBeLessThanOrEqual(json[`max_${m}_ms`]);
    }
    // Per request: the first token cannot come before the server's first-token delay, nor after the last.
    json.ttfts_ms.forEach((ttft: number, i: number) => {
      expect(ttft).toBeGreaterThanOrEqual(15);
      expect(ttft).toBeLessThanOrEqual(json.e2els_ms[i]);
      expect(json.itls_ms[i]).toHaveLength(11);
      const gaps = json.itls_ms[i].reduce((a: number, b: number) => a + b, 0);
      expect(gaps).toBeCloseTo(json.e2els_ms[i] - ttft, 6); // the gaps span first to last token
    });
    const tpots = json.ttfts_ms.map((ttft: number, i: number) => (json.e2els_ms[i] - ttft) / 11);
    expect(json.mean_tpot_ms).toBeCloseTo(tpots.reduce((a: number, b: number) => a + b, 0) / 40, 9);
    const userTput = json.e2els_ms.map((e2el: number) => 12 / (e2el / 1000));
    expect(json.user_throughput).toBeCloseTo(userTput.reduce((a: number, b: number) => a + b, 0) / 40, 6);
    expect(json.output_throughput).toBeCloseTo(480 / json.duration, 6);
  });

  it('counts prompt words and token chunks when the server sends no usage; the chat role chunk is no token', async () => {
    const server = await standin({ omitUsage: true, firstTokenDelayMs: 20 });
    const out = join(await tempDir(), 'r.json');
    const run = await bench(server.port, [
      '--backend', 'openai-chat', '--num-prompts', '6', '--max-concurrency', '3',
      '--random-input-len', '25', '--random-output-len', '5', '--ignore-eos', '--save-result', out, '--save-detailed',
    ]);
    expect(run.code).toBe(0);
    expect(server.stats()).toMatchObject({ completed: 6, maxInFlight: 3, promptTokens: 150, completionTokens: 30 });
    expect(run.metrics.get('SERVER_TOTAL_INPUT_TOKENS')).toBe(150);
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(30);
    const json = JSON.parse(await readFile(out, 'utf8'));
    expect(json.token_counts_from_usage).toEqual({ prompt: 0, completion: 0 });
    for (const itls of json.itls_ms) expect(itls).toHaveLength(4);
  });

  it('reports what the server generated when eos is not ignored', async () => {
    const server = await standin({ eosAfter: 3 });
    const run = await bench(server.port, ['--num-prompts', '5', '--random-input-len', '8', '--random-output-len', '10']);
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(15);
    expect(server.stats().completionTokens).toBe(15);
    expect(server.stats().maxInFlight).toBeLessThanOrEqual(5); // no --max-concurrency: all at once
  });
});

describe('serve-bench failed requests', () => {
  it('counts refused connections as failed requests with their reason, and exits 0', async () => {
    const run = await bench(await freePort(), ['--num-prompts', '5', '--max-concurrency', '2', '--random-input-len', '4']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Error type: ECONNREFUSED, Count: 5 requests');
    expect(run.stdout).toContain('=======================!FAILED REQUESTS!=======================\nTotal failed requests: 5\n');
    expect(run.stderr).toContain('all requests failed');
    expect(run.metrics.get('SERVER_SUCCESSFUL_REQUESTS')).toBe(0);
    expect(run.metrics.get('SERVER_FAILED_REQUESTS')).toBe(5);
    expect(run.metrics.get('SERVER_MEDIAN_TTFT')).toBe(0);
  });

  it('counts a wrong endpoint (HTTP 404) as failed requests', async () => {
    const server = await standin();
    const run = await bench(server.port, ['--num-prompts', '3', '--endpoint', '/v1/nothing', '--random-input-len', '4']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Error type: HTTP 404, Count: 3 requests');
    expect(run.stdout).toContain('/v1/nothing: HTTP 404 Not Found: {"error":{"message":"stand-in: no route POST /v1/nothing"');
    expect(run.metrics.get('SERVER_FAILED_REQUESTS')).toBe(3);
  });

  it('counts HTTP 500 answers, keeping the tokens of the requests that succeeded', async () => {
    const server = await standin({ failEvery: 3 });
    const run = await bench(server.port, ['--num-prompts', '12', '--max-concurrency', '3', '--random-input-len', '10', '--random-output-len', '4', '--ignore-eos']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Error type: HTTP 500, Count: 4 requests\n {2}e\.g\. http:\/\/127\.0\.0\.1:\d+\/v1\/completions: HTTP 500 Internal Server Error: .*injected failure/);
    expect(run.metrics.get('SERVER_SUCCESSFUL_REQUESTS')).toBe(8);
    expect(run.metrics.get('SERVER_FAILED_REQUESTS')).toBe(4);
    expect(server.stats()).toMatchObject({ completed: 8, injected: { http500: 4 } });
    expect(run.metrics.get('SERVER_TOTAL_INPUT_TOKENS')).toBe(server.stats().promptTokens);
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(server.stats().completionTokens);
  });

  it('fails a request whose stream carries a malformed chunk', async () => {
    const server = await standin({ malformedEvery: 4 });
    const run = await bench(server.port, ['--num-prompts', '8', '--max-concurrency', '2', '--random-input-len', '10', '--random-output-len', '6', '--ignore-eos']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Error type: malformed chunk, Count: 2 requests');
    expect(run.stdout).toContain('data line is not JSON');
    expect(run.metrics.get('SERVER_FAILED_REQUESTS')).toBe(2);
    expect(run.metrics.get('SERVER_TOTAL_INPUT_TOKENS')).toBe(60);
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(36);
  });

  it('fails a request whose connection closes mid-stream', async () => {
    const server = await standin({ closeEvery: 5 });
    const run = await bench(server.port, ['--num-prompts', '10', '--max-concurrency', '2', '--random-input-len', '10', '--random-output-len', '6', '--ignore-eos']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Error type: connection closed mid-stream, Count: 2 requests');
    expect(run.metrics.get('SERVER_SUCCESSFUL_REQUESTS')).toBe(8);
    expect(server.stats()).toMatchObject({ completed: 8, injected: { closed: 2 } });
    expect(run.metrics.get('SERVER_TOTAL_GENERATED_TOKENS')).toBe(server.stats().completionTokens);
  });

  it('fails a request that exceeds --request-timeout', async () => {
    const server = await standin({ firstTokenDelayMs: 3000 });
    const run = await bench(server.port, ['--num-prompts', '2', '--random-input-len', '4', '--request-timeout', '0.2']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Error type: timeout, Count: 2 requests');
    expect(run.stdout).toContain('no complete response within 0.2 s');
  });

  it('exits 2 on bad arguments and 1 when the result file cannot be written', async () => {
    expect((await bench(1, ['--num-prompts', 'many'])).code).toBe(2);
    expect((await bench(1, ['--bogus'])).stderr).toContain('unknown option "--bogus"');
    const server = await standin();
    const aFile = join(await tempDir(), 'a-file');
    await writeFile(aFile, '');
    const run = await bench(server.port, ['--num-prompts', '1', '--random-input-len', '3', '--save-result', join(aFile, 'result.json')]);
    expect(run.stdout).toContain('Serving Benchmark Result');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot write the result file');
  });
});

describe('serve-bench and the stand-in as processes', () => {
  function start(script: string, args: string[]): ChildProcess {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    });
    return child;
  }

  async function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'exit');
    return { code, stdout, stderr };
  }

  it('starts the stand-in with --port 0, reports LISTENING, is unhealthy until its --ready-file exists, then serves the CLI', async () => {
    const readyFile = join(await tempDir(), 'ready');
    const server = start('tests/fixtures/standin-openai-server.ts', ['--port', '0', '--role', 'ctx', '--ready-file', readyFile, '--token-delay-ms', '1']);
    let stderr = '';
    server.stderr!.on('data', (d) => (stderr += d));
    let stdout = '';
    const port = await new Promise<number>((resolve, reject) => {
      server.stdout!.on('data', (d) => {
        stdout += d;
        const m = /^LISTENING (\d+)$/m.exec(stdout);
        if (m) resolve(Number(m[1]));
      });
      server.on('exit', (code) => reject(new Error(`stand-in exited with ${code}: ${stderr}`)));
    });
    const health = async () => (await fetch(`http://127.0.0.1:${port}/health`)).status;
    expect(await health()).toBe(503);
    const models = (await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data[0].id).toBe('standin-model');
    expect(await health()).toBe(503);
    await writeFile(readyFile, '');
    expect(await health()).toBe(200);
    expect(stderr).toContain('STAND-IN');
    expect(stderr).toContain('role=ctx');

    const client = start('runners/trtllm/serve-bench/main.ts', ['--model', 'm', '--port', String(port), '--num-prompts', '3', '--random-input-len', '5', '--random-output-len', '4', '--ignore-eos']);
    const result = await output(client);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Total generated tokens:                  12        \n');
  });

  it('exits 2 from the command line on bad arguments', async () => {
    const result = await output(start('runners/trtllm/serve-bench/main.ts', ['--model', 'm', '--max-concurrency', '0']));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--max-concurrency must be an integer >= 1');
  });
});
