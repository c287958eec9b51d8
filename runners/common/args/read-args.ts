// The one argument layer of every `disagg-bench` command. A command declares its options once (an
// ArgSpec: node's parseArgs options, plus the style its upstream reads them in) and reads its words
// with readArgs; framework/cli.ts answers --help and -h for every command before the command runs
// (asksForHelp, with the command's `usage`). Bad words are refused in one sentence
// (UsageError) naming the word and what was expected.
//
// Styles (how the words are read; each keeps its upstream's semantics exactly):
//   'node'     node's parseArgs as is: --name value, --name=value, a value never starts with '-'
//   'gflags'   nixlbench's gflags: -name/--name, --noflag, --flag=false, ... (gflags.ts)
//   'click'    kvbench's click: a value option takes the next word whatever it is (click.ts)
//   'argparse' benchmark_serving's argparse: the next word unless it is an option; nargs='?' (argparse.ts)
//
// A new command plugs in like this (framework/commands/*.ts are examples):
//   export const usage = 'usage: disagg-bench mine [--out FILE] ...';
//   export async function run(argv: string[]) {
//     const { values } = readArgs(argv, { options: { out: { type: 'string' } } });
//     ...
//   }
// and one line in framework/cli.ts's command table; tests/cli/help.test.ts then walks its --help.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.ts';
import { argparseTakesNextWord, argparseWords } from './argparse.ts';
import { clickTakesNextWord, clickWords } from './click.ts';
import { GFLAGS_HELP_WORDS, gflagsTakesNextWord, gflagsWords } from './gflags.ts';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
export type ArgStyle = 'node' | 'gflags' | 'click' | 'argparse';

export interface ArgSpec<O extends OptionSpec = OptionSpec, P extends boolean = boolean> {
  options: O;
  /** Words that are not options are taken (default: each is refused). */
  positionals?: P;
  /** How the words are read (default 'node'). */
  style?: ArgStyle;
  /** click's `--x/--no-x` pairs (both in `options` as booleans): values[x] is the last of the pair given, false when neither. */
  switches?: readonly string[];
  /** argparse's nargs='?' string options: given without a value, they are in the result's `alone`. */
  optionalValue?: readonly string[];
  /** The refusal of an option `options` does not have (default: unknown option "--name"). */
  unknown?: (name: string) => UsageError;
}

/** What a command's --help needs to know of its words: which option may take the next word. */
export type HelpSpec = Partial<Pick<ArgSpec, 'style' | 'options'>>;

type ParseConfig<O extends OptionSpec, P extends boolean> = { args: string[]; options: O; allowPositionals: P; strict: true; tokens: true };
export type ReadArgs<O extends OptionSpec, P extends boolean> = ReturnType<typeof parseArgs<ParseConfig<O, P>>> & {
  /** optionalValue options given without a value. */
  alone: ReadonlySet<string>;
};

/** The words of a command line, read as `spec` says; a UsageError for any it cannot take. */
export function readArgs<O extends OptionSpec, P extends boolean = false>(argv: readonly string[], spec: ArgSpec<O, P>): ReadArgs<O, P> {
  const style = spec.style ?? 'node';
  let words: string[] = [...argv];
  let alone = new Set<string>();
  if (style === 'gflags') words = gflagsWords(argv, spec.options);
  else if (style === 'click') words = clickWords(argv, spec.options);
  else if (style === 'argparse') ({ words, alone } = argparseWords(argv, spec.options, spec.optionalValue ?? []));
  let parsed: ReturnType<typeof parseArgs<ParseConfig<O, P>>>;
  try {
    parsed = parseArgs({ args: words, options: spec.options, allowPositionals: (spec.positionals ?? false) as P, strict: true, tokens: true });
  } catch (err) {
    throw refusal(err as Error & { code?: string }, spec);
  }
  const values = parsed.values as Record<string, unknown>;
  for (const name of spec.switches ?? []) {
    let on = false;
    for (const t of parsed.tokens) if (t.kind === 'option' && (t.name === name || t.name === `no-${name}`)) on = t.name === name;
    values[name] = on;
  }
  return { ...parsed, alone };
}

/** One sentence for each of parseArgs' refusals (its own messages run to three sentences). */
function refusal(err: Error & { code?: string }, spec: ArgSpec<OptionSpec, boolean>): UsageError {
  const quoted = /'([^']*)'/.exec(err.message)?.[1] ?? '';
  const long = /--([^\s'<]+)/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const name = quoted.replace(/^--?/, '');
      return (quoted.startsWith('--') && spec.unknown?.(name)) || new UsageError(`unknown option ${JSON.stringify(quoted)}`, name);
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`unexpected argument ${JSON.stringify(quoted)}: this command takes options only`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      if (/does not take an argument/.test(err.message)) return new UsageError(`--${long} takes no value`, long);
      if (/ambiguous/.test(err.message)) {
        return new UsageError(`--${long} needs a value, and the word after it is an option (write --${long}=VALUE for a value that starts with '-')`, long);
      }
      return new UsageError(`--${long} needs a value`, long);
    }
    default:
      return new UsageError(err.message); // parseArgs' other refusals, in its own words
  }
}

/**
 * Whether the words ask for the command's usage: --help or -h (gflags' help flags in that style)
 * as an option, not as the value of one, and before a `--` that ends the options. Help wins over
 * any other fault of the line, as gflags and argparse answer it.
 */
export function asksForHelp(argv: readonly string[], spec: HelpSpec = {}): boolean {
  return asksFor(argv, spec, spec.style === 'gflags' ? GFLAGS_HELP_WORDS : ['--help', '-h']);
}

/** Whether one of `words` is in the line as an option (not an option's value, not after `--`): --help's test, for other such words (--version). */
export function asksFor(argv: readonly string[], spec: HelpSpec, words: readonly string[]): boolean {
  const style = spec.style ?? 'node';
  const options = spec.options ?? {};
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') return false;
    if (words.includes(word)) return true;
    const takesNext =
      style === 'gflags' ? gflagsTakesNextWord(word, options)
      : style === 'click' ? clickTakesNextWord(word, options)
      : style === 'argparse' ? argparseTakesNextWord(word, argv[i + 1], options)
      : false; // node: a value never starts with '-', so a help word is never one
    if (takesNext) i++;
  }
  return false;
}
