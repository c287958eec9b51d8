// One config loaded and validated as the run does it (read, parse, schema and rules), in a process
// of its own: prints one JSON line with the time the load took (wall and CPU) and the process's peak
// memory. The child of bench/hostile-input.ts. A nixl config's rules read the matrix files it names
// (hostile matrices are validated this way).
//   node --import tsx bench/lib/validate-one.ts <file> [disagg|nixl]
import { performance } from 'node:perf_hooks';
import { readYamlFileSync } from '../../framework/config/load.ts';
import { validateConfig } from '../../framework/config/validate.ts';
import { disaggType } from '../../framework/types/disagg.ts';
import { nixlType } from '../../framework/types/nixl.ts';

const file = process.argv[2];
const type = process.argv[3] === 'nixl' ? nixlType : disaggType;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const parsed = readYamlFileSync(file, file);
const issues = parsed.issues.length > 0 ? parsed.issues : validateConfig(type, parsed, file, file, 'perf');
const wallS = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({
  wallS,
  cpuS: (cpu.user + cpu.system) / 1e6,
  peakMiB: process.resourceUsage().maxRSS / 1024,
  issues: issues.length,
  first: issues[0] ? `${issues[0].line ?? ''}:${issues[0].col ?? ''} ${issues[0].message}`.slice(0, 160) : undefined,
}));
