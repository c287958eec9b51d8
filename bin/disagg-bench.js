#!/usr/bin/env node
// The package's command. The sources are TypeScript, so a clone needs no build step: the CLI runs
// from a compiled bundle (scripts/build-cli.mjs) while that bundle matches the sources, and is
// rebuilt here first when a source changed (~0.3 s, once); where it cannot be built, through tsx.
// Plain node starts a process ~4x faster than tsx, which is what every transfer rank pays.
//   DISAGG_BIN=tsx        always run through tsx
//   DISAGG_DEBUG_BIN=1    say on stderr which way ran ('bin: bundle <entry>' or 'bin: tsx') and why
import { constants } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// `disagg-bench run` owns its signals from its first line: one that comes while the CLI loads ends
// the run here, at once (nothing has been submitted yet), in the words framework/suite/cancellation.ts
// uses; framework/run/command.ts takes the signals over once loaded. This stays outside that module
// because loading it takes seconds on a busy machine. Node's default would end the process unsaid.
if (process.argv[2] === 'run') endRunOnEarlySignals();

const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const debug = process.env.DISAGG_DEBUG_BIN === '1' ? (line) => process.stderr.write(`bin: ${line}\n`) : () => {};

const main = (process.env.DISAGG_BIN !== 'tsx' && (await bundledMain())) || (await tsxMain());
process.exitCode = await main(process.argv.slice(2));

/** main() of the compiled CLI, built first if stale; undefined if it cannot be built or loaded. */
async function bundledMain() {
  try {
    const { buildCliBundle, freshCliBundle } = await import('../scripts/build-cli.mjs');
    let entry = freshCliBundle(packageRoot);
    if (!entry) {
      const t0 = performance.now();
      entry = await buildCliBundle(packageRoot);
      debug(`built the CLI bundle in ${(performance.now() - t0).toFixed(0)} ms: ${entry}`);
    }
    const { main } = await import(pathToFileURL(entry).href);
    debug(`bundle ${entry}`);
    if (process.env.DISAGG_DEBUG) process.setSourceMapsEnabled(true);
    return main;
  } catch (error) {
    debug(`no bundle (${error.message.split('\n')[0]})`);
    return undefined;
  }
}

async function tsxMain() {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('../framework/cli.ts');
  debug('tsx');
  return main;
}

function endRunOnEarlySignals() {
  const handler = (signal) => {
    process.stderr.write(`disagg-bench: the run was interrupted (${signal} received by disagg-bench run) before any test was collected: nothing was submitted, nothing ran\n`);
    process.exit(128 + constants.signals[signal]);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, handler);
  globalThis[Symbol.for('disagg-bench.early-signals')] = handler;
}
