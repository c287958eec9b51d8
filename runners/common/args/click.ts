// The 'click' style of the argument layer (read-args.ts), for the commands that take kvbench's
// command lines (NIXL benchmark/kvbench: click). click's reading of an option that takes a value:
// the next word is its value whatever it looks like (`--isl-scale -5` is -5, not a missing
// value; click's OptionParser._match_long_opt takes the next argument as it is). Rewritten as
// `--name=value` for parseArgs. click's `--x/--no-x` pairs are the layer's switches.
import type { OptionSpec } from './read-args.ts';

/** click: an option that takes a value, written without `=`, takes the next word. */
export function clickTakesNextWord(word: string, spec: OptionSpec): boolean {
  const m = /^--([^=]+)$/.exec(word);
  return m !== null && spec[m[1]] !== undefined && spec[m[1]].type === 'string';
}

/** `argv` in click's forms -> words parseArgs reads the same way. */
export function clickWords(argv: readonly string[], spec: OptionSpec): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (clickTakesNextWord(argv[i], spec) && i + 1 < argv.length) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}
