// Runs N ranks of an entry script on this machine: what `--ranks N` does, as a command.
//   node --import tsx runners/xfer/launch.ts --ranks 4 runners/xfer/selftest.ts --backend shm
// Exits 0 when every rank did; otherwise with the first failed rank's exit code.
import { pathToFileURL } from 'node:url';
import { nodeEntryArgv, spawnLocalRanks } from './local-launch.ts';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../common/exit-codes.ts';

export async function launchMain(argv: string[]): Promise<number> {
  const ranksAt = argv.indexOf('--ranks');
  const ranks = Number(argv[ranksAt + 1]);
  const rest = ranksAt < 0 ? [] : [...argv.slice(0, ranksAt), ...argv.slice(ranksAt + 2)];
  const [entry, ...args] = rest;
  if (ranksAt < 0 || !Number.isInteger(ranks) || ranks < 1 || !entry) {
    console.error('usage: launch.ts --ranks N <entry script> [arguments for every rank]');
    return EXIT_USAGE;
  }
  let result: Awaited<ReturnType<typeof spawnLocalRanks>>;
  try {
    result = await spawnLocalRanks(ranks, nodeEntryArgv(entry, args));
  } catch (err) {
    console.error(`launch: ${(err as Error).message}`);
    return EXIT_USAGE;
  }
  if (result.ok) return EXIT_OK;
  const first = result.firstFailure ?? result.exits.find((e) => e.code !== 0)!;
  console.error(`launch: rank ${first.rank} failed (${first.signal ?? `exit code ${first.code}`}); exits: ${result.exits.map((e) => e.signal ?? e.code).join(' ')}`);
  return first.code || EXIT_FAILURE;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  launchMain(process.argv.slice(2)).then((code) => process.exit(code));
}
