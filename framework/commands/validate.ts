// `disagg-bench validate [FILE...]`: every issue of every config, located; exit 1 when any.
import path from 'node:path';
import { readSettings } from '../settings.ts';
import { planRun, loadPlannedTest } from '../select/plan.ts';
import { identityOf } from '../config/ids.ts';
import { displayPath } from '../config/discover.ts';
import { formatIssue } from '../config/issue.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';

export const usage = `usage: disagg-bench validate [CONFIG.yaml ...]
  Prints every issue of every config (or of the files given: test_configs/<type>/<category>/<name>.yaml
  under WORK_DIR), each at its file and place; exit 1 when any config is invalid.`;

export async function run(argv: string[]): Promise<number> {
  const { positionals: files } = readArgs(argv, { options: {}, positionals: true });
  const settings = readSettings();
  const gpu = { gpuType: undefined, source: 'none' as const };
  const plan = files.length ? undefined : planRun({ settings, gpu });
  for (const notice of plan?.notices ?? []) console.warn(notice);
  const tests = plan
    ? plan.tests
    : files.map((file) => {
        const abs = path.resolve(file);
        const rel = path.relative(settings.workDir, abs);
        const identity = identityOf(rel);
        if (!identity) throw new Error(`${file}: not at test_configs/<test_type>/<category>/<name>.yaml under WORK_DIR ${settings.workDir}`);
        return loadPlannedTest({ ...identity, absFile: abs, displayFile: displayPath(rel) }, gpu, process.env);
      });
  let bad = 0;
  for (const t of tests) {
    if (t.issues.length === 0) continue;
    bad += 1;
    for (const issue of t.issues) console.log(formatIssue(issue));
  }
  console.log(`${tests.length} config(s), ${bad} invalid`);
  return bad > 0 ? 1 : 0;
}
