// The order test files start in: slowest first, so that with several files at once
// (vitest.config.ts, DISAGG_TEST_WORKERS) a 90-second file does not start last and run alone at
// the end. Vitest knows each file's last duration from its cache (node_modules/.vite/vitest), but a
// fresh clone (CI) has no cache and Vitest then starts the largest files first, which are not the
// slowest. Here a file's duration is Vitest's cached one, else the longest the committed duration
// tables (bench/results/suite-durations-*.txt, bench/suite-durations.ts) give it, else unknown
// (after the known ones, largest first). A file that failed last time still goes first. Only the
// order changes: which tests run and what they decide does not.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const TABLES = 'bench/results';
const TABLE_NAME = /^suite-durations-.*\.txt$/;
/** A per-file line of a table: `  95.9   7.6%     4  tests/reliability/cluster-faults.test.ts`. */
const FILE_LINE = /^\s*(\d+(?:\.\d+)?)\s+[\d.]+%\s+\d+\s+(\S+\.test\.ts)\b/;

/** Seconds per test file (relative to the root), the longest any committed table gives. */
export function tableDurations(root: string): Map<string, number> {
  const durations = new Map<string, number>();
  let names: string[];
  try {
    names = readdirSync(path.join(root, TABLES)).filter((n) => TABLE_NAME.test(n));
  } catch {
    return durations;
  }
  for (const name of names) {
    for (const line of readFileSync(path.join(root, TABLES, name), 'utf8').split('\n')) {
      const m = FILE_LINE.exec(line);
      if (m) durations.set(m[2], Math.max(durations.get(m[2]) ?? 0, Number(m[1])));
    }
  }
  return durations;
}

export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const table = tableDurations(root);
    const known = (spec: TestSpecification) => {
      const file = path.relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return { failed: cached?.failed ?? false, ms: cached?.duration ?? (table.has(file) ? table.get(file)! * 1000 : undefined) };
    };
    const size = (spec: TestSpecification) => {
      try {
        return statSync(spec.moduleId).size;
      } catch {
        return 0;
      }
    };
    const keyed = files.map((spec) => ({ spec, ...known(spec), size: size(spec) }));
    keyed.sort((a, b) => {
      // The groups and projects Vitest keeps apart stay apart, in its order.
      const group = a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder;
      if (group !== 0) return group;
      if (a.spec.project.name !== b.spec.project.name) return a.spec.project.name < b.spec.project.name ? -1 : 1;
      if (a.failed !== b.failed) return a.failed ? -1 : 1;
      if (a.ms !== undefined && b.ms !== undefined) return b.ms - a.ms;
      if (a.ms !== undefined || b.ms !== undefined) return a.ms !== undefined ? -1 : 1;
      return b.size - a.size;
    });
    return keyed.map((k) => k.spec);
  }
}
