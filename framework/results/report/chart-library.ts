// The charting library inlined into every report: Chart.js's UMD build, read from node_modules so
// the page needs no network. Its package exports do not list the UMD file, so it is found next to
// the package's resolved CommonJS entry (dist/chart.cjs).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { EnvironmentError } from '../../../runners/common/errors.ts';

export const CHART_LIBRARY_PACKAGE = 'chart.js';
const UMD_FILE = 'chart.umd.min.js';

let cached: string | undefined;

/** The library's source, safe to place inside a <script> element. */
export function chartLibrarySource(): string {
  if (cached !== undefined) return cached;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(CHART_LIBRARY_PACKAGE);
  } catch (error) {
    throw new EnvironmentError(
      `the report's charting library '${CHART_LIBRARY_PACKAGE}' is not installed (${(error as Error).message}); run npm ci`,
    );
  }
  const file = path.join(path.dirname(entry), UMD_FILE);
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (error) {
    throw new EnvironmentError(`cannot read ${file}, the ${CHART_LIBRARY_PACKAGE} UMD build the report inlines: ${(error as Error).message}`);
  }
  // '</script' inside the code would end the element early; '<\/' means the same to JavaScript.
  cached = source.replace(/<\/(script)/gi, '<\\/$1');
  return cached;
}
