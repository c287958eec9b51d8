// `disagg-bench serve-bench`: the project's own serving benchmark client. It prints the same
// result block as benchmark_serving, so one extractor reads the logs of either client.
// Exit code: 0 when the benchmark ran, failed requests included (the verdict is the framework's,
// read from the block); 2 on bad arguments; 1 when no result could be produced or saved.
import { randomInt } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { formatServingResult } from '../../common/serving-format.ts';
import { driveRequests } from './driver.ts';
import { formatFailureSummary } from './failure.ts';
import { parseServeBenchArgs, serveBenchArgSpec, serveBenchUsage, type ServeBenchOptions } from './options.ts';
import { UsageError } from '../../common/errors.ts';
import { asksForHelp } from '../../common/args/read-args.ts';
import { generatePrompts } from './prompts.ts';
import { resultJson, writeResultJson } from './result-json.ts';
import { summarizeRun } from './summarize.ts';
import { EXIT_OK, exitCodeOfError } from '../../common/exit-codes.ts';

export interface ServeBenchIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: ServeBenchIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

function header(options: ServeBenchOptions, seed: number): string {
  const concurrency = options.maxConcurrency ?? 'None';
  const unit = options.tokenIdVocab !== null ? `token ids below ${options.tokenIdVocab}` : 'words';
  const lengths = options.nvSa ? `lengths in [len * ${options.rangeRatio}, len]` : `range ratio ${options.rangeRatio}`;
  return [
    `serve-bench${options.nvSa ? ' (nv-sa)' : ''}: ${options.numPrompts} prompts to ${options.url.href} (${options.backend}), ` +
      `input ${options.inputLen} (${unit}), output ${options.outputLen} tokens, ${lengths}, ignore_eos ${options.ignoreEos}, seed ${seed}`,
    'Traffic request rate: inf',
    `Maximum request concurrency: ${concurrency}`,
    '',
  ].join('\n');
}

async function run(options: ServeBenchOptions, io: ServeBenchIo): Promise<number> {
  const seed = options.seed ?? randomInt(2 ** 31);
  const startedAt = new Date();
  if (options.ignored.length > 0) io.stderr(`serve-bench: accepted for compatibility, no effect here: ${options.ignored.join(' ')}\n`);
  const prompts = generatePrompts({
    count: options.numPrompts,
    inputLen: options.inputLen,
    outputLen: options.outputLen,
    rangeRatio: options.rangeRatio,
    rangeMode: options.nvSa ? 'sa' : 'symmetric',
    tokenIdVocab: options.tokenIdVocab ?? undefined,
    seed,
  });
  io.stdout(header(options, seed));
  const { outcomes, durationS } = await driveRequests(
    {
      url: options.url,
      api: options.api,
      model: options.model,
      ignoreEos: options.ignoreEos,
      timeoutMs: options.requestTimeoutS * 1000,
      concurrency: options.maxConcurrency ?? options.numPrompts,
    },
    prompts,
  );
  const summary = summarizeRun({
    prompts,
    outcomes,
    durationS,
    percentileMetrics: options.percentileMetrics,
    metricPercentiles: options.metricPercentiles,
  });
  if (summary.failures.length > 0) io.stdout(formatFailureSummary(summary.failures));
  if (summary.result.successfulRequests === 0) {
    io.stderr('serve-bench: all requests failed; check the endpoint and the reasons above\n');
  }
  io.stdout(formatServingResult(summary.result, options.nvSa ? 'sa' : 'trtllm'));
  // What upstream's run_benchmark_nv_sa.sh prints after the SA client, from its result.json.
  if (options.nvSa) io.stdout(`Total failed requests: ${options.numPrompts - summary.result.successfulRequests}\n`);
  if (options.saveResult !== null) {
    try {
      await writeResultJson(options.saveResult, resultJson(options, seed, summary, startedAt));
    } catch (error) {
      io.stderr(`serve-bench: cannot write the result file ${options.saveResult}: ${(error as Error).message}\n`);
      return exitCodeOfError(error);
    }
  }
  return EXIT_OK;
}

/** Entry point of `disagg-bench serve-bench <args>`; resolves with the process exit code. */
export async function serveBenchMain(argv: string[], io: ServeBenchIo = processIo): Promise<number> {
  if (asksForHelp(argv, serveBenchArgSpec)) {
    io.stdout(`${serveBenchUsage}\n`);
    return EXIT_OK;
  }
  let options: ServeBenchOptions;
  try {
    options = parseServeBenchArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`serve-bench: ${error.message}\n\n${serveBenchUsage}\n`);
    return exitCodeOfError(error);
  }
  try {
    return await run(options, io);
  } catch (error) {
    io.stderr(`serve-bench: the benchmark could not run: ${(error as Error).stack ?? String(error)}\n`);
    return exitCodeOfError(error);
  }
}

// Runnable on its own too (`npx tsx runners/trtllm/serve-bench/main.ts ...`), e.g. inside a job.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await serveBenchMain(process.argv.slice(2));
}
