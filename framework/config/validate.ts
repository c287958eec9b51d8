// Validation: the type's JSON Schema (ajv, draft 2020-12, all errors), then its semantic rules.
// Every finding is located in the source file, and all of them are returned at once.
import { createRequire } from 'node:module';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { KeyPath, TestType } from '../contract/test-type.ts';
import type { ParsedYaml } from './load.ts';
import { formatKeyPath, type ConfigIssue } from './issue.ts';
import { BOUND_REASON, SAFE_INTEGER_REASON } from '../../runners/common/number-bounds.ts';

// verbose: errors carry their schema object, where `x-hints` may explain a missing or unknown key
// better than the generic message (e.g. a key of an older layout: what upstream does with it).
// strictNumbers: `.inf` and `.nan` (and 1e309, which YAML reads as infinity) are no number here.
// ajv is loaded by the first validation (a plan whose configs' verdicts are all in the config
// cache, as a listing of an unchanged tree, validates nothing); synchronously, as planning is.
let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

function newAjv(): Ajv2020 {
  const { Ajv2020: Ajv } = createRequire(import.meta.url)('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  return new Ajv({ allErrors: true, strict: false, allowUnionTypes: true, verbose: true, strictNumbers: true });
}

function validatorFor(type: TestType): ValidateFunction {
  let validate = compiled.get(type.name);
  if (!validate) {
    ajv ??= newAjv();
    validate = ajv.compile(withSafeIntegers(type.schema) as object);
    compiled.set(type.name, validate);
  }
  return validate;
}

/**
 * The schema with every `type: integer` bounded to the whole numbers a JavaScript number holds
 * exactly (the loader refuses such a literal; this catches `1e300`, a float that is a whole
 * number). A bound the schema sets itself stays.
 */
function withSafeIntegers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withSafeIntegers);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = key === 'enum' || key === 'const' ? value : withSafeIntegers(value);
  const type = out.type;
  if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) {
    const bounded = out.maximum === undefined || out.minimum === undefined;
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = Number.MAX_SAFE_INTEGER;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = -Number.MAX_SAFE_INTEGER;
    if (bounded && out[BOUND_REASON] === undefined) out[BOUND_REASON] = SAFE_INTEGER_REASON;
  }
  return out;
}

/** Schema and rule issues of a parsed config (parse issues are the loader's). */
/** `absFile`: where the config is (its rules resolve relative paths against its folder). */
export function validateConfig(type: TestType, parsed: ParsedYaml, displayFile: string, absFile: string, category?: string): ConfigIssue[] {
  return validateParsed(type, parsed, displayFile, absFile, category).issues;
}

export interface Validation {
  issues: ConfigIssue[];
  /** The rules asked where the config is: their verdict may depend on files beside it. */
  readLocation: boolean;
}

/** validateConfig, also saying whether the verdict depends on the content alone (for the config cache). */
export function validateParsed(type: TestType, parsed: ParsedYaml, displayFile: string, absFile: string, category?: string): Validation {
  let readLocation = false;
  const source = {
    get file() {
      readLocation = true;
      return absFile;
    },
    category,
  };
  const issues = checkParsed(type, parsed, displayFile, source);
  return { issues, readLocation };
}

function checkParsed(type: TestType, parsed: ParsedYaml, displayFile: string, source: { file: string; category?: string }): ConfigIssue[] {
  const at = (path: KeyPath, message: string): ConfigIssue => {
    const pos = parsed.locate(path);
    return { file: displayFile, line: pos?.line, col: pos?.col, path: formatKeyPath(path), message };
  };
  if (parsed.data === null || typeof parsed.data !== 'object' || Array.isArray(parsed.data)) {
    return [at([], `expected a mapping of sections at the top level, got ${describe(parsed.data)}`)];
  }
  const validate = validatorFor(type);
  if (!validate(parsed.data)) {
    return simplify(validate.errors ?? []).map((e) => at(errorPath(e), errorMessage(e, parsed.data)));
  }
  return type.rules(parsed.data as Record<string, unknown>, source).map((v) => at(v.path, v.message));
}

function errorPath(error: ErrorObject): KeyPath {
  const path: KeyPath = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  if (error.keyword === 'required') path.push(error.params.missingProperty as string);
  if (error.keyword === 'additionalProperties') path.push(error.params.additionalProperty as string);
  return path;
}

function errorMessage(error: ErrorObject, root: unknown): string {
  const value = valueAt(root, error.instancePath);
  switch (error.keyword) {
    case 'required':
      return hint(error, error.params.missingProperty as string) ?? 'is required but missing';
    case 'additionalProperties':
      return hint(error, error.params.additionalProperty as string) ?? 'is not a known key here (check the spelling)';
    case 'type':
      if (typeof value === 'number' && !Number.isFinite(value)) return `expected a finite ${error.params.type}, got ${describe(value)}`;
      return `expected ${error.params.type}, got ${describe(value)}`;
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum': {
      // Where the bound is the machine's (a reason in the schema), say so; a benchmark's own
      // minimum keeps ajv's sentence.
      const reason = (error.parentSchema as Record<string, unknown> | undefined)?.[BOUND_REASON];
      const limit = error.params.limit as number;
      const machine = typeof reason === 'string' && (error.keyword !== 'minimum' || limit === -Number.MAX_SAFE_INTEGER);
      if (machine) return `${describe(value)} is out of range: expected ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${limit}, ${reason}`;
      return `${error.message ?? 'is invalid'} (got ${describe(value)})`;
    }
    case 'enum':
      return `expected one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}, got ${describe(value)}`;
    case 'const':
      return `expected ${JSON.stringify(error.params.allowedValue)}, got ${describe(value)}`;
    case 'pattern':
      return `${describe(value)} does not match the expected form ${error.params.pattern}`;
    default:
      return `${error.message ?? 'is invalid'} (got ${describe(value)})`;
  }
}

/** The schema's own sentence for a missing or unknown key (`x-hints: {key: sentence}`), if any. */
function hint(error: ErrorObject, key: string): string | undefined {
  const hints = (error.parentSchema as { 'x-hints'?: Record<string, string> } | undefined)?.['x-hints'];
  return hints && Object.hasOwn(hints, key) ? hints[key] : undefined;
}

/**
 * ajv reports every branch of a oneOf/anyOf that failed; the user needs the branch failures
 * only when nothing more specific was said about the same place.
 */
function simplify(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const key = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  const specific = out.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf');
  return specific.length > 0 ? specific : out;
}

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  // An unquoted 2002-12-14 is a date to PyYAML, and so here: say so, and how to keep it text.
  if (value instanceof Date) return `a date ${dateText(value)} (an unquoted date is one, as PyYAML reads it; quote it for text)`;
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `string ${JSON.stringify(value.length > 60 ? value.slice(0, 57) + '...' : value)}`;
  // YAML's own spellings of the numbers that are not finite.
  if (typeof value === 'number' && !Number.isFinite(value)) return Number.isNaN(value) ? '.nan' : value > 0 ? '.inf' : '-.inf';
  return `${typeof value} ${String(value)}`;
}

/** A date as written: the day alone when it has no time of day. */
function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}
