// The 'argparse' style of the argument layer (read-args.ts), for serve-bench, whose command lines
// are benchmark_serving's (Python argparse): an option that takes a value, written without `=`,
// takes the next word unless that word is itself an option (`--seed -5` is -5; `--seed --x` is
// a missing value), and an option with nargs='?' (the spec's optionalValue) takes the next word
// when there is one that is not an option, else stands alone.
import type { OptionSpec } from './read-args.ts';

const isOption = (word: string | undefined) => word === undefined || word.startsWith('--');

/** argparse: an option that takes a value, written without `=`, takes the next word unless it is an option. */
export function argparseTakesNextWord(word: string, next: string | undefined, spec: OptionSpec): boolean {
  const m = /^--([^=]+)$/.exec(word);
  return m !== null && spec[m[1]]?.type === 'string' && !isOption(next);
}

/**
 * `argv` in argparse's forms -> words parseArgs reads the same way, and the optionalValue options
 * that stood alone (left out of the words: parseArgs has no option that may or may not take a value).
 */
export function argparseWords(argv: readonly string[], spec: OptionSpec, optionalValue: readonly string[]): { words: string[]; alone: Set<string> } {
  const words: string[] = [];
  const alone = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      words.push(...argv.slice(i));
      break;
    }
    const name = /^--([^=]+)$/.exec(word)?.[1];
    if (name !== undefined && optionalValue.includes(name) && isOption(argv[i + 1])) alone.add(name);
    else if (argparseTakesNextWord(word, argv[i + 1], spec)) words.push(`${word}=${argv[++i]}`);
    else words.push(word);
  }
  return { words, alone };
}
