// A benchmark's command line, read as node's parseArgs reads it, with what every command here
// does: --help (or -h) prints the script's usage and exits 0 before anything is measured; an
// option it does not have is one line and the usage, exit 2; never node's stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export function benchOptions<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  const args = config.args ?? process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  try {
    return parseArgs<T>(config);
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
}
