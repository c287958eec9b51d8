// Command templates: a command given as words with named placeholders ({model}, {port}...). Each
// word is split without any shell expansion and every substituted value stays one quoted word, so
// a template may move values around but can never turn a value into shell syntax.
import { JoinedWord, splitShellWords, type Word } from '../../../../runners/common/shell.ts';
import type { CommandTemplate } from '../serving-config.ts';
import { DisaggBenchError } from '../../../../runners/common/errors.ts';
import type { ErrorCategory } from '../../../../runners/common/errors.ts';

/** A list value expands to several words, allowed only where the placeholder is a whole word. */
export type TemplateValue = Word | Array<string | number>;
/** undefined = the placeholder exists but this config gives it no value. */
export type TemplateValues = Record<string, TemplateValue | undefined>;

const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/g;
const WHOLE_PLACEHOLDER = /^\{([a-z][a-z0-9_]*)\}$/;

export class CommandTemplateError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'CommandTemplateError';
  /** `what`: the command the template is for, as the message starts with it. */
  constructor(message: string, what: string) {
    super(message, { place: what });
  }
}

export function templateWords(template: CommandTemplate): string[] {
  return typeof template === 'string' ? splitShellWords(template) : [...template];
}

/** Placeholder names a template uses, in order of first use. */
export function templatePlaceholders(template: CommandTemplate): string[] {
  const names = new Set<string>();
  for (const word of templateWords(template)) for (const m of word.matchAll(PLACEHOLDER)) names.add(m[1]);
  return [...names];
}

/** The template's words with every placeholder replaced; `what` names the command in errors. */
export function expandTemplate(template: CommandTemplate, values: TemplateValues, what: string): Word[] {
  const words = templateWords(template);
  if (words.length === 0) throw new CommandTemplateError(`${what}: the command is empty`, what);
  const placeholderValue = (name: string): TemplateValue => {
    if (!Object.hasOwn(values, name)) {
      throw new CommandTemplateError(
        `${what}: unknown placeholder {${name}} (known: ${Object.keys(values).map((k) => `{${k}}`).join(' ')})`,
        what,
      );
    }
    const value = values[name];
    if (value === undefined) throw new CommandTemplateError(`${what}: {${name}} has no value in this config`, what);
    return value;
  };
  const out: Word[] = [];
  for (const word of words) {
    const whole = WHOLE_PLACEHOLDER.exec(word);
    if (whole) {
      const value = placeholderValue(whole[1]);
      if (Array.isArray(value)) out.push(...value);
      else out.push(value);
      continue;
    }
    const pieces: Word[] = [];
    let last = 0;
    for (const m of word.matchAll(PLACEHOLDER)) {
      if (m.index > last) pieces.push(word.slice(last, m.index));
      const value = placeholderValue(m[1]);
      if (Array.isArray(value)) {
        throw new CommandTemplateError(`${what}: {${m[1]}} is a list of words and must stand alone as a word, not inside ${JSON.stringify(word)}`, what);
      }
      pieces.push(value);
      last = m.index + m[0].length;
    }
    if (last < word.length) pieces.push(word.slice(last));
    out.push(pieces.length === 1 ? pieces[0] : new JoinedWord(pieces));
  }
  return out;
}
