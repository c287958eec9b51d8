// The 'argparse' style of the argument layer (read-args.ts), for serve-bench, whose command lines
// are benchmark_serving's (Python argparse): an option that takes a value, written without `=`,
// takes the next word unless that word is itself an option (`--seed -5` is -5; `--seed --x` is
// a missing value), and an option with nargs='?' (the spec's optionalValue) takes the next word
// when there is one that is not an option, else stands alone. argparse's allow_abbrev (a long
// option written as a prefix of its name) is argparseAbbreviations, for commands whose upstream
// parser keeps it on.
import { CommandArgsError } from './args-error.ts';
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

/**
 * argparse's allow_abbrev (on by default; ArgumentParser._parse_optional): a long option may be
 * written as a prefix of its name, `=value` or not (`--rou 3` is `--rounds 3`, `--nvlink=ipc` is
 * `--nvlink-backend=ipc`). An exact name wins; a prefix of several names is refused in argparse's
 * words (`ambiguous option: --t could match --test, --tokens`), unless exactly one of them is in
 * `upstream` (the upstream tool's own names: its prefix means what it means there, the command's
 * additions notwithstanding). A word matching no name is left for the reader to refuse. Words
 * after `--` are not options.
 */
export function argparseAbbreviations(argv: readonly string[], names: readonly string[], upstream: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const m = /^--([^=]+)(=.*)?$/s.exec(word);
    if (!m || names.includes(m[1])) {
      out.push(word);
      continue;
    }
    const matches = names.filter((n) => n.startsWith(m[1]));
    const theirs = matches.filter((n) => upstream.includes(n));
    const name = matches.length === 1 ? matches[0] : theirs.length === 1 ? theirs[0] : undefined;
    if (matches.length > 1 && name === undefined) {
      throw new CommandArgsError(`ambiguous option: --${m[1]} could match ${matches.map((n) => `--${n}`).join(', ')}`, m[1]);
    }
    out.push(name === undefined ? word : `--${name}${m[2] ?? ''}`);
  }
  return out;
}
