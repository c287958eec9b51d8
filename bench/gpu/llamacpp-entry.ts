// The llamacpp commands as one script for the GPU machine, where Node is carried and the CLI is
// not built (bench/gpu/llamacpp-run.sh bundles this file): `llama-server`, `llama-router` and
// `serve-bench`, each as `disagg-bench <command>` runs it. Command line: USAGE below (--help prints it).
import { run as serverRun } from '../../runners/llamacpp/server.ts';
import { run as routerRun } from '../../runners/llamacpp/router.ts';
import { serveBenchMain } from '../../runners/trtllm/serve-bench/main.ts';
import { benchSubcommand } from '../lib/options.ts';

const commands: Record<string, (argv: string[]) => Promise<number>> = { 'llama-server': serverRun, 'llama-router': routerRun, 'serve-bench': serveBenchMain };
const USAGE = `usage: llamacpp-entry.mjs <${Object.keys(commands).join('|')}> [the command's arguments]
  Runs one llamacpp command as \`disagg-bench <command>\` does, with the arguments after it.`;

const { command, argv } = benchSubcommand(Object.keys(commands), USAGE);
try {
  process.exitCode = await commands[command](argv);
} catch (err) {
  console.error(`${command}: ${(err as Error).message}`);
  process.exitCode = 1;
}
