// A benchmark's command line, read as node's parseArgs reads it, with what every command under
// bench/ does: --help (or -h) prints the script's usage and exits 0 before anything is measured;
// an option it does not have, or a value it cannot use, is one line naming the option and what was
// expected, then the usage, exit 2; never node's stack trace. tests/bench/command-lines.test.ts
// holds every script under bench/ to reading its command line here.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseSize } from '../../runners/common/size.ts';

type Parsed<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

/** Bounds of a number: at least `min`, at most `max`, or strictly more than `above`. */
export interface Bounds {
  min?: number;
  max?: number;
  above?: number;
}

/** The parsed command line, and readers of its values that refuse a bad one (one line, the usage, exit 2). */
export interface BenchCommandLine<T extends ParseArgsConfig> {
  values: Parsed<T>['values'];
  positionals: string[];
  /** `message` (one line), then the usage, exit 2. */
  refuse(message: string): never;
  /** --name as a whole number, by default at least 1. */
  wholeNumber(name: string, bounds?: Bounds): number;
  /** --name as a comma-separated list of whole numbers, by default each at least 1. */
  wholeNumbers(name: string, bounds?: Bounds): number[];
  /** --name as a number (fractions allowed), by default at least 0. */
  number(name: string, bounds?: Bounds): number;
  /** --name as a size: bytes, or a number with a unit K, M, G (runners/common/size.ts). */
  size(name: string, bounds?: Bounds): number;
  /** --name as a comma-separated list of sizes. */
  sizes(name: string, bounds?: Bounds): number[];
  /** --name as one of `choices`. */
  oneOf<C extends string>(name: string, choices: readonly C[]): C;
  /** --name as a comma-separated list, each one of `choices`. */
  someOf<C extends string>(name: string, choices: readonly C[]): C[];
  /** --name as a comma-separated list, each token read by `read` (undefined: not one), `expected` saying what a token must be. */
  listOf<V>(name: string, read: (token: string) => V | undefined, expected: string): V[];
  /** --name as a comma-separated list of sizes, each with the token it was given as (e.g. 64M). */
  labelledSizes(name: string): { label: string; bytes: number }[];
  /** --name read by `parse`, which throws on a bad value: its message is the refusal, the option named first. */
  parsed<V>(name: string, parse: (raw: string) => V): V;
  /** --name as a comma-separated list, each token read by `parse` as `parsed` reads a value. */
  parsedList<V>(name: string, parse: (token: string) => V): V[];
}

/** How one token of a value is read: its value, or undefined when it is not one; `expected` says what it must be. */
interface Reader<V> {
  read(token: string): V | undefined;
  expected: string;
}

function printAndExit(text: string, code: 0 | 2): never {
  if (code === 0) console.log(text);
  else console.error(text);
  process.exit(code);
}

function isHelp(arg: string | undefined): boolean {
  return arg === '--help' || arg === '-h';
}

/** One line: parseArgs' own messages may span several. */
const oneLine = (message: string) => message.replace(/\s*\n\s*/g, ' ');

function boundsText(bounds: Bounds): string {
  const parts: string[] = [];
  if (bounds.above !== undefined) parts.push(`greater than ${bounds.above}`);
  if (bounds.min !== undefined && bounds.max !== undefined) parts.push(`from ${bounds.min} to ${bounds.max}`);
  else if (bounds.min !== undefined) parts.push(`of at least ${bounds.min}`);
  else if (bounds.max !== undefined) parts.push(`of at most ${bounds.max}`);
  return parts.join(', ');
}

function within(value: number, bounds: Bounds): boolean {
  return (bounds.min === undefined || value >= bounds.min) && (bounds.max === undefined || value <= bounds.max) && (bounds.above === undefined || value > bounds.above);
}

function numberReader(what: string, bounds: Bounds, parse: (token: string) => number | undefined): Reader<number> {
  return {
    read: (token) => {
      const value = parse(token.trim());
      return value !== undefined && within(value, bounds) ? value : undefined;
    },
    expected: `${what} ${boundsText(bounds)}`.trim(),
  };
}

const plainNumber = (token: string) => (token !== '' && Number.isFinite(Number(token)) ? Number(token) : undefined);
const wholeNumber = (token: string) => {
  const value = plainNumber(token);
  return value !== undefined && Number.isSafeInteger(value) ? value : undefined;
};
/** What a size is, as a refusal says it. */
const SIZE_EXPECTED = 'a size (bytes, or a number with a unit K, M, G)';

/** A size token's bytes (runners/common/size.ts), or undefined when it is not one. */
const sizeOrUndefined = (token: string): number | undefined => {
  try {
    return parseSize(token);
  } catch {
    return undefined;
  }
};

function choiceReader<C extends string>(choices: readonly C[]): Reader<C> {
  const expected = choices.length === 1 ? choices[0] : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
  return { read: (token) => choices.find((c) => c === token.trim()), expected };
}

/**
 * The command line of a benchmark, `config` as parseArgs takes it (strict: an option not in it is
 * refused). `usage` is the script's USAGE: printed by --help and after every refusal.
 */
export function benchOptions<T extends ParseArgsConfig>(config: T, usage: string): BenchCommandLine<T> {
  const args = config.args ?? process.argv.slice(2);
  if (args.some(isHelp)) printAndExit(usage, 0);
  const refuse = (message: string): never => printAndExit(`${oneLine(message)}\n${usage}`, 2);
  let parsed: Parsed<T>;
  try {
    parsed = parseArgs<T>(config);
  } catch (error) {
    return refuse((error as Error).message);
  }
  const values = parsed.values as Record<string, unknown>;
  const given = (name: string, expected: string): string => {
    const raw = values[name];
    if (typeof raw !== 'string') return refuse(`--${name} is needed: expected ${expected}`);
    return raw;
  };
  const one = <V>(name: string, reader: Reader<V>): V => {
    const raw = given(name, reader.expected);
    const value = reader.read(raw);
    return value !== undefined ? value : refuse(`--${name} '${raw}': expected ${reader.expected}`);
  };
  /** `parse(raw)`, or its error's message as the refusal, naming the option first when the message does not. */
  const thrown = <V>(name: string, raw: string, parse: (raw: string) => V): V => {
    try {
      return parse(raw);
    } catch (error) {
      const message = (error as Error).message;
      return refuse(message.startsWith(`--${name}`) ? message : `--${name} '${raw}': ${message}`);
    }
  };
  /** The tokens of a comma-separated list, at least one. */
  const tokensOf = (name: string, expected: string): { raw: string; tokens: string[] } => {
    const raw = given(name, `a comma-separated list, each ${expected}`);
    const tokens = raw.split(',').map((t) => t.trim()).filter(Boolean);
    return tokens.length > 0 ? { raw, tokens } : refuse(`--${name} '${raw}': expected a comma-separated list, each ${expected}`);
  };
  const list = <V>(name: string, reader: Reader<V>): V[] => {
    const { raw, tokens } = tokensOf(name, reader.expected);
    return tokens.map((token) => {
      const value = reader.read(token);
      return value !== undefined ? value : refuse(`--${name} '${raw}': '${token}' is not ${reader.expected}`);
    });
  };
  const labelledSize = (label: string) => {
    const bytes = sizeOrUndefined(label);
    return bytes ? { label, bytes } : undefined;
  };
  return {
    values: parsed.values,
    positionals: parsed.positionals ?? [],
    refuse,
    wholeNumber: (name, bounds = { min: 1 }) => one(name, numberReader('a whole number', bounds, wholeNumber)),
    wholeNumbers: (name, bounds = { min: 1 }) => list(name, numberReader('a whole number', bounds, wholeNumber)),
    number: (name, bounds = { min: 0 }) => one(name, numberReader('a number', bounds, plainNumber)),
    size: (name, bounds = {}) => one(name, numberReader(SIZE_EXPECTED, bounds, sizeOrUndefined)),
    sizes: (name, bounds = {}) => list(name, numberReader(SIZE_EXPECTED, bounds, sizeOrUndefined)),
    oneOf: (name, choices) => one(name, choiceReader(choices)),
    someOf: (name, choices) => list(name, choiceReader(choices)),
    listOf: (name, read, expected) => list(name, { read, expected }),
    labelledSizes: (name) => list(name, { read: labelledSize, expected: `${SIZE_EXPECTED}, more than 0` }),
    parsed: (name, parse) => thrown(name, given(name, 'a value'), parse),
    parsedList: (name, parse) => tokensOf(name, 'a value').tokens.map((token) => thrown(name, token, parse)),
  };
}

/**
 * The command line of a script that hands its arguments to one of several commands (the GPU
 * machine's bundled entries): the first argument names the command, the rest are its own (its
 * --help included). --help or -h first prints `usage`, exit 0; no command, or one it does not
 * have, is one line and the usage, exit 2.
 */
export function benchSubcommand<C extends string>(commands: readonly C[], usage: string): { command: C; argv: string[] } {
  const [first, ...argv] = process.argv.slice(2);
  if (isHelp(first)) printAndExit(usage, 0);
  const command = commands.find((c) => c === first);
  if (command === undefined) {
    const expected = `expected one of ${commands.join(', ')}`;
    printAndExit(`${first === undefined ? `a command is needed: ${expected}` : `'${first}' is not a command: ${expected}`}\n${usage}`, 2);
  }
  return { command, argv };
}
