// The 'gflags' style of the argument layer (read-args.ts). nixlbench reads its command line with
// gflags (gflags::ParseCommandLineFlags in benchmark/nixlbench/src/utils/utils.cpp,
// xferBenchConfig::parseConfig). A command in this style (the sweep) takes exactly the forms gflags
// takes and refuses the rest in one sentence, with gflags' own words:
//   -flag / --flag              one or two dashes
//   --flag=value, --flag value  a non-boolean flag takes the next word when it has no `=`
//   --flag, --noflag            booleans; --flag=true|false|1|0|t|f|y|n|yes|no (any case)
//   --                          ends the flags
// gflags keeps words that are not flags and nixlbench then ignores them; here they are refused
// (a `--check_consistency false` would otherwise run WITH the check, the `false` silently dropped).
// Numbers as gflags reads them: decimal or 0x-hex, nothing after them; unsigned flags refuse a
// sign. The result is the same command line in the one form node's parseArgs reads.
// Help: gflags answers --help, -help, --helpfull and --helpshort (HandleCommandLineHelpFlags in
// gflags_reporting.cc, before it reports any other error); so does this style, and -h as every
// command. gflags then exits 1; here help exits 0, as every disagg-bench command.
import { CommandArgsError } from './args-error.ts';
import type { OptionSpec } from './read-args.ts';

const TRUE = ['1', 't', 'true', 'y', 'yes'];
const FALSE = ['0', 'f', 'false', 'n', 'no'];
/** nixlbench refuses any argument containing these (parseConfig's disabledFlags). */
const DISABLED = ['flagfile', 'fromenv', 'tryfromenv'];

/** The words that ask a gflags program for its usage (gflags' help flags, and -h). */
export const GFLAGS_HELP_WORDS = ['--help', '-help', '--helpfull', '-helpfull', '--helpshort', '-helpshort', '-h'];

/** gflags: a non-boolean flag written without `=` takes the next word as its value, whatever it looks like. */
export function gflagsTakesNextWord(word: string, spec: OptionSpec): boolean {
  const m = /^--?([^=]+)$/.exec(word);
  return m !== null && spec[m[1]] !== undefined && spec[m[1]].type !== 'boolean';
}

/**
 * `argv` in gflags' forms -> `--name=value` / `--name` words for parseArgs. A flag the spec does
 * not have is passed on as `--name` for parseArgs to refuse (the layer names it then).
 */
export function gflagsWords(argv: readonly string[], spec: OptionSpec): string[] {
  for (const arg of argv) {
    const disabled = DISABLED.find((d) => arg.includes(d));
    if (disabled) throw new CommandArgsError(`'${arg}': --${disabled} is disabled for nixlbench (its own refusal: "Use --config_file instead"; here pass the parameters as flags)`);
  }
  const out: string[] = [];
  const booleans = new Map<string, boolean>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      if (i + 1 < argv.length) throw positional(argv[i + 1], 'after --, where gflags stops reading flags');
      break;
    }
    if (!arg.startsWith('-') || arg === '-') throw positional(arg);
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const value = eq < 0 ? undefined : body.slice(eq + 1);
    const option = spec[name];
    if (!option) {
      const negated = name.startsWith('no') ? spec[name.slice(2)] : undefined;
      if (negated && value === undefined) {
        if (negated.type !== 'boolean') {
          throw new CommandArgsError(`--${name}: boolean value (${name}) specified for the non-boolean flag '${name.slice(2)}' (gflags: only booleans take the no<flag> form)`);
        }
        booleans.set(name.slice(2), false);
        continue;
      }
      // its value (if any) goes with it, so the refusal names the flag, not the value
      if (value === undefined && i + 1 < argv.length && !argv[i + 1].startsWith('-')) i++;
      out.push(`--${name}`);
      continue;
    }
    if (option.type === 'boolean') {
      booleans.set(name, value === undefined ? true : gflagsBool(name, value));
      continue;
    }
    if (value !== undefined) {
      out.push(`--${name}=${value}`);
      continue;
    }
    if (i + 1 >= argv.length) throw new CommandArgsError(`--${name}: flag '${name}' is missing its argument (gflags)`);
    out.push(`--${name}=${argv[++i]}`);
  }
  for (const [name, on] of booleans) if (on) out.push(`--${name}`);
  return out;
}

function positional(word: string, where = ''): CommandArgsError {
  return new CommandArgsError(
    `'${word}' is not a flag${where ? ` (${where})` : ''}: nixlbench takes flags only and would ignore it; a boolean takes its value with '=' (--check_consistency=false)`,
  );
}

/** gflags' boolean values, any case. */
export function gflagsBool(name: string, raw: string): boolean {
  const v = raw.toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  throw new CommandArgsError(`--${name}: illegal value '${raw}' specified for bool flag '${name}' (gflags takes ${[...TRUE, ...FALSE].join(', ')})`);
}

/**
 * An integer flag as gflags parses it (FlagValue::ParseFrom in gflags.cc): base 16 when the value
 * starts with 0x, else base 10 through strtoll / strtoull, which skip leading white space and take
 * a sign (`--num_iter= 32` is 32, `--warmup_iter -5` is -5); nothing may follow the digits.
 * Unsigned flags refuse a minus sign. `type` is the flag's gflags type, for the message.
 */
export function gflagsInteger(name: string, raw: string, type: 'int32' | 'uint32' | 'uint64'): number {
  const unsigned = type !== 'int32';
  const hex = /^0[xX]([0-9a-fA-F]+)$/.exec(raw);
  const dec = hex ? null : /^[ \t\n\v\f\r]*([-+]?)(\d+)$/.exec(raw);
  const n = hex ? Number.parseInt(hex[1], 16) : dec ? (dec[1] === '-' ? -Number(dec[2]) : Number(dec[2])) : NaN;
  const max = type === 'int32' ? 2 ** 31 - 1 : type === 'uint32' ? 2 ** 32 - 1 : Number.MAX_SAFE_INTEGER;
  const min = type === 'int32' ? -(2 ** 31) : 0;
  if ((!hex && !dec) || (unsigned && dec?.[1] === '-') || !Number.isSafeInteger(n) || n > max || n < min) {
    throw new CommandArgsError(`--${name}: illegal value '${raw}' specified for ${type} flag '${name}' (gflags takes a decimal or 0x-hex integer${unsigned ? ' >= 0' : ''})`);
  }
  return n;
}
