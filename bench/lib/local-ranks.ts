// What the GPU benchmarks share: started on their own they start two ranks of themselves here (the
// local launcher); started as a rank (RANK or SLURM_PROCID set) they run the rank's part. Results
// are appended as one JSON line to the file they name.
import fs from 'node:fs';
import path from 'node:path';
import { nodeEntryArgv, spawnLocalRanks } from '../../runners/xfer/index.ts';

/** Runs `rankMain` as this process's rank, or starts `ranks` ranks of `entry` and exits with their outcome. */
export async function runAsLocalRanks(entry: string, ranks: number, rankMain: () => Promise<void>): Promise<void> {
  if (process.env.RANK === undefined && process.env.SLURM_PROCID === undefined) {
    const result = await spawnLocalRanks(ranks, nodeEntryArgv(entry, process.argv.slice(2)));
    process.exit(result.ok ? 0 : 1);
  }
  await rankMain();
}

export function appendJsonLine(file: string, line: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
  console.log(`appended to ${file}`);
}
