// Nightly-size property fuzzing: the CI test's properties (tests/fuzz/properties.ts) with a large
// count and any seed, and each case's time judged: a case over --case-limit-ms (default 1000)
// fails the run, naming the input. Usage:
//   node --import tsx scripts/fuzz.ts [--runs 20000] [--seed N] [--case-limit-ms 1000]
// Prints the seed (to reproduce a failure), the outcomes and the slowest case of each property.
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { checkBytes, checkConfig, checkLog, configArbitraries, logArbitraries, newStats, type FuzzStats } from '../tests/fuzz/properties.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20000' }, seed: { type: 'string' }, 'case-limit-ms': { type: 'string', default: '1000' } } });
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
const limitMs = Number(values['case-limit-ms']);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || !(limitMs > 0)) {
  console.error('usage: scripts/fuzz.ts [--runs N >= 1] [--seed N] [--case-limit-ms MS > 0]');
  process.exit(2);
}

const configs = configArbitraries();
const logs = logArbitraries();
// Warm-up outside the timing: the first validation compiles every schema.
for (const t of ['disagg', 'wideep', 'nixl']) checkConfig('metadata: {}\n', t, 'perf', newStats());

let failed = false;
function run(name: string, property: (stats: FuzzStats) => fc.IPropertyWithHooks<[unknown]> | fc.IProperty<[unknown]>, count: number): void {
  const stats = newStats();
  const result = fc.check(property(stats), { seed, numRuns: count });
  const slow = stats.slowestMs > limitMs;
  failed ||= result.failed || slow;
  console.log(`${name}: ${stats.cases} cases, ${JSON.stringify(stats.outcomes)}; slowest ${stats.slowestMs.toFixed(1)} ms${slow ? ` > ${limitMs} ms: ${JSON.stringify(stats.slowestInput)}` : ''}`);
  if (result.failed) console.log(`  FAILED: ${fc.defaultReportMessage(result)}`);
}

console.log(`fuzz: seed ${seed}, ${runs} runs per property, case limit ${limitMs} ms`);
run('random YAML', (s) => fc.property(configs.random, (c) => checkConfig(c.text, c.type, c.category, s)), runs);
run('mutated configs', (s) => fc.property(configs.mutated, (c) => checkConfig(c.text, c.type, c.category, s)), runs);
run('random bytes', (s) => fc.property(configs.bytes, (b) => checkBytes(b, s)), runs);
run('mutated logs', (s) => fc.property(logs.mutated, (l) => checkLog(l.name, l.file, l.text, s)), runs);
run('random logs', (s) => fc.property(logs.random, (l) => checkLog(l.name, l.file, l.text, s)), runs);
console.log(failed ? 'fuzz: FAILED' : 'fuzz: passed');
process.exit(failed ? 1 : 0);
