// Everything that turns values into bash text goes through here: one quoting rule, one word
// splitter, so no config value can ever become shell syntax in a generated script. It lives with
// the types because the serving and the nixl types (and their runners) all write job scripts, and
// no runner may depend on another.
import { DisaggBenchError, InputError } from './errors.ts';
import type { ErrorCategory } from './errors.ts';

/** Characters that need no quoting anywhere in a bash word (no `=`: it could start an assignment). */
const SAFE_WORD = /^[A-Za-z0-9_/.,:@%+-]+$/;

/** Quotes one value as a single inert bash word (`x; rm -rf /` -> `'x; rm -rf /'`). */
export function shellQuote(value: string | number): string {
  const text = String(value);
  if (SAFE_WORD.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Quotes every word and joins them with spaces. */
export function shellJoin(words: Array<string | number>): string {
  return words.map(shellQuote).join(' ');
}

export class ShellWordsError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'ShellWordsError';
  /** `text`: the line or word refused, as the message quotes it. */
  constructor(message: string, text: string) {
    super(message, { place: JSON.stringify(text) });
  }
}

/**
 * Splits a line into words the way a shell would, but performs no expansion at all: quotes
 * ('...', "...") and backslashes only group and escape. `$`, backticks and globs stay literal.
 */
export function splitShellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new ShellWordsError(`unterminated ' quote in ${JSON.stringify(line)}`, line);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        // Inside double quotes a backslash escapes only these, as in bash.
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1])) j++;
        word += line[j];
      }
      if (j >= line.length) throw new ShellWordsError(`unterminated " quote in ${JSON.stringify(line)}`, line);
      inWord = true;
      i = j;
    } else if (ch === '\\') {
      if (i + 1 >= line.length) throw new ShellWordsError(`trailing backslash in ${JSON.stringify(line)}`, line);
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

export interface EnvAssignment {
  name: string;
  value: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses `A=1 B="two words"` (the configs' *_env_var strings) into assignments. */
export function parseEnvAssignments(line: string): EnvAssignment[] {
  return splitShellWords(line).map((word) => {
    const eq = word.indexOf('=');
    const name = eq > 0 ? word.slice(0, eq) : '';
    if (!ENV_NAME.test(name)) {
      throw new ShellWordsError(`${JSON.stringify(word)} is not of the form NAME=value`, word);
    }
    return { name, value: word.slice(eq + 1) };
  });
}

/** Assignments from a mapping (accuracy.env_var: {HF_HOME: /x}); names are checked the same way. */
export function envFromMapping(mapping: Record<string, unknown>): EnvAssignment[] {
  return Object.entries(mapping).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new ShellWordsError(`${JSON.stringify(name)} is not a valid variable name`, name);
    return { name, value: String(value) };
  });
}

/** A value known only when the job runs (a node name...): expands a script variable, quoted. */
export class ShellVar {
  constructor(readonly name: string) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?$/.test(name)) throw new InputError(`not a shell variable name: ${name}`);
  }
}

/** Pieces glued into one word: `--host=` + a runtime variable, `http://` + host + `:8000`. */
export class JoinedWord {
  constructor(readonly parts: Word[]) {}
}

/** One bash word: a literal (quoted), a runtime variable ("${X}") or pieces joined. */
export type Word = string | number | ShellVar | JoinedWord;

export function renderWord(word: Word): string {
  if (word instanceof ShellVar) return `"\${${word.name}}"`;
  if (word instanceof JoinedWord) return word.parts.length === 0 ? "''" : mergeLiterals(word.parts).map(renderWord).join('');
  return shellQuote(word);
}

/** Adjacent literal pieces quoted as one ('model=/m,url=' rather than 'model='/m',url='). */
function mergeLiterals(parts: Word[]): Word[] {
  const out: Word[] = [];
  for (const part of parts.flatMap((p) => (p instanceof JoinedWord ? p.parts : [p]))) {
    const last = out[out.length - 1];
    if ((typeof part === 'string' || typeof part === 'number') && (typeof last === 'string' || typeof last === 'number')) {
      out[out.length - 1] = `${last}${part}`;
    } else {
      out.push(part);
    }
  }
  return out;
}

export function renderWords(words: Word[]): string {
  return words.map(renderWord).join(' ');
}
