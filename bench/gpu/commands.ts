// Entry of the transfer benchmarks for the GPU machine, which has no tsx: bundled to JavaScript
// by bench/gpu/bundle.sh; ranks come from the engine's launcher there (launch.mjs --ranks N
// commands.mjs ...). Command line: USAGE below (--help prints it).
import { ctPerftestMain } from '../../runners/xfer/benches/ct-perftest.ts';
import { sequentialCtPerftestMain } from '../../runners/xfer/benches/sequential-ct-perftest.ts';
import { matgenMain } from '../../runners/xfer/benches/matgen-cli.ts';
import { run as sweep } from '../../runners/xfer/benches/sweep/sweep.ts';
import { run as ep } from '../../runners/xfer/benches/ep/ep.ts';
import { run as kvpipe } from '../../runners/xfer/benches/kvpipe/kvpipe.ts';
import { run as cacheEngine } from '../../runners/xfer/benches/cache-engine/cache-engine.ts';
import { run as gpuCheck } from '../../runners/xfer/gpu-check.ts';
import { benchSubcommand } from '../lib/options.ts';

const mains: Record<string, (argv: string[]) => Promise<number>> = {
  'ct-perftest': ctPerftestMain,
  'sequential-ct-perftest': sequentialCtPerftestMain,
  matgen: matgenMain,
  sweep,
  ep,
  kvpipe,
  'cache-engine': cacheEngine,
  'gpu-check': gpuCheck,
};

const USAGE = `usage: node commands.mjs <${Object.keys(mains).join('|')}> [the command's arguments]
  Runs one transfer benchmark as \`disagg-bench <command>\` does, with the arguments after it.`;

const { command, argv } = benchSubcommand(Object.keys(mains), USAGE);
mains[command](argv).then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`${command}: ${err.message}`);
    process.exit(1);
  },
);
