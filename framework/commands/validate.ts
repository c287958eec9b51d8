// `disagg-bench validate [FILE...] [--json]`: every issue of every config, located; exit 1 when any.
import path from 'node:path';
import { readSettings, SETTING_VARIABLES } from '../settings.ts';
import { planRun, loadPlannedTest } from '../select/plan.ts';
import { identityOf } from '../config/ids.ts';
import { displayPath } from '../config/discover.ts';
import { formatIssue } from '../config/issue.ts';
import { readArgs } from '../../runners/common/args/read-args.ts';
import { UsageError } from '../../runners/common/errors.ts';
import { printJson } from './support/json-output.ts';

export const usage = `usage: disagg-bench validate [CONFIG.yaml ...] [--json]
  Prints every issue of every config (or of the files given: test_configs/<type>/<category>/<name>.yaml
  under ${SETTING_VARIABLES.workDir}), each at its file and place; exit 1 when any config is invalid.
  --json   one JSON document: {configs, invalid, issues: [{id, file, line, col, path, message}]}`;

export async function run(argv: string[]): Promise<number> {
  const { positionals: files, values } = readArgs(argv, { options: { json: { type: 'boolean', default: false } }, positionals: true });
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
        if (!identity) throw new UsageError(`${file}: not at test_configs/<test_type>/<category>/<name>.yaml under ${SETTING_VARIABLES.workDir} ${settings.workDir}`);
        return loadPlannedTest({ ...identity, absFile: abs, displayFile: displayPath(rel) }, gpu, process.env);
      });
  const invalid = tests.filter((t) => t.issues.length > 0);
  if (values.json) {
    const issues = invalid.flatMap((t) => t.issues.map((i) => ({ id: t.id, file: i.file, line: i.line ?? null, col: i.col ?? null, path: i.path ?? null, message: i.message })));
    printJson({ configs: tests.length, invalid: invalid.length, issues });
  } else {
    for (const t of invalid) for (const issue of t.issues) console.log(formatIssue(issue));
    console.log(`${tests.length} config(s), ${invalid.length} invalid`);
  }
  return invalid.length > 0 ? 1 : 0;
}
