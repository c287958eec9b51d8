// The llamacpp commands as one script for the GPU machine, where Node is carried and the CLI is
// not built (bench/gpu/llamacpp-run.sh bundles this file): `llama-server`, `llama-router` and
// `serve-bench`, each as `disagg-bench <command>` runs it.
import { run as serverRun } from '../../runners/llamacpp/server.ts';
import { run as routerRun } from '../../runners/llamacpp/router.ts';
import { serveBenchMain } from '../../runners/trtllm/serve-bench/main.ts';

const [command, ...argv] = process.argv.slice(2);
const commands: Record<string, (argv: string[]) => Promise<number>> = { 'llama-server': serverRun, 'llama-router': routerRun, 'serve-bench': serveBenchMain };
const main = commands[command ?? ''];
if (!main) {
  console.error(`usage: llamacpp-entry.mjs ${Object.keys(commands).join('|')} ...`);
  process.exit(2);
}
try {
  process.exitCode = await main(argv);
} catch (err) {
  console.error(`${command}: ${(err as Error).message}`);
  process.exitCode = 1;
}
