// The config's own extractor (`benchmark.metrics`: log_file, extractor_pattern, metric_names):
// every match of the pattern yields one metric per value group, the groups mapped to the names in
// order. Patterns come from Python-era configs, so Python syntax is accepted: `(?P<name>...)`
// groups and leading inline flags `(?imsx)` (x = verbose: whitespace and # comments ignored; a
// pattern written over several lines, as the Python defaults were, is read as verbose too).
// Matching is always global and multi-line (^ and $ at line ends), as the Python version used it.
// A named group whose name is not a metric name is a label, e.g. `(?P<concurrency>\d+)`.
import type { ExtractResult, Metric, MetricSpec } from '../metric.ts';
import { InternalError } from '../../../runners/common/errors.ts';

/** A config's own metrics (`benchmark.metrics`), the shape every test type that offers them takes. */
export interface MetricsOverride {
  log_file: string;
  extractor_pattern: string;
  metric_names: string[];
  unit?: string;
  higher_is_better?: boolean;
}

export interface CompiledMetricPattern {
  regex: RegExp;
  /** Per capturing group in order: its name, if named. */
  groups: (string | undefined)[];
}

/** Drops the whitespace and comments of a verbose (?x) pattern, keeping escapes and classes. */
function stripVerbose(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      out += next === ' ' || next === '#' ? next : c + next; // `\ ` is a plain space in verbose mode
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return out;
}

/** Capturing groups in order of their opening parenthesis, with their names. */
function capturingGroups(source: string): (string | undefined)[] {
  const groups: (string | undefined)[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') {
      if (source[i + 1] !== '?') groups.push(undefined);
      else {
        const named = /^\(\?<([A-Za-z_$][\w$]*)>/.exec(source.slice(i));
        if (named) groups.push(named[1]);
      }
    }
  }
  return groups;
}

/** Compiles a (possibly Python-flavoured) pattern; throws SyntaxError with the reason. */
export function compileMetricPattern(pattern: string): CompiledMetricPattern {
  let source = pattern;
  let flags = 'gm';
  const inline = /^\s*\(\?([imsx]+)\)/.exec(source);
  let verbose = source.includes('\n');
  if (inline) {
    source = source.slice(inline[0].length);
    for (const f of new Set(inline[1])) if (f !== 'x' && f !== 'm') flags += f;
    verbose ||= inline[1].includes('x');
  }
  if (verbose) source = stripVerbose(source);
  source = source.replace(/\(\?P<([A-Za-z_]\w*)>/g, '(?<$1>').replace(/\(\?P=([A-Za-z_]\w*)\)/g, '\\k<$1>');
  const regex = new RegExp(source, flags);
  const groups = capturingGroups(source);
  // The parenthesis scan must agree with the engine's own count (an empty alternative always matches).
  const engineCount = new RegExp(`${source}|`).exec('')!.length - 1;
  if (engineCount !== groups.length) {
    throw new InternalError(`could not map the ${engineCount} capture groups of /${source}/ to names`);
  }
  return { regex, groups };
}

function splitGroups(groups: (string | undefined)[], names: string[]) {
  const value: number[] = [];
  const label: { index: number; name: string }[] = [];
  groups.forEach((name, index) => {
    if (name !== undefined && !names.includes(name)) label.push({ index, name });
    else value.push(index);
  });
  return { value, label };
}

/**
 * For the config validator: why `pattern` cannot extract `names`, or undefined when it can
 * (it compiles, and it has exactly one value group per name).
 */
export function checkRegexSpec(pattern: string, names: string[]): string | undefined {
  if (names.length === 0) return 'metric_names is empty: name at least one metric';
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) return `metric_names lists '${duplicate}' twice`;
  let compiled: CompiledMetricPattern;
  try {
    compiled = compileMetricPattern(pattern);
  } catch (error) {
    return `extractor_pattern does not compile: ${(error as Error).message}`;
  }
  const { value, label } = splitGroups(compiled.groups, names);
  if (value.length !== names.length) {
    const labels = label.length ? ` (plus label groups ${label.map((l) => l.name).join(', ')})` : '';
    return (
      `extractor_pattern has ${value.length} value capture group(s)${labels} but metric_names has ${names.length} ` +
      `(${names.join(', ')}); use one group per name, (?:...) for grouping, and a named group such as ` +
      `(?P<concurrency>\\d+) for a label`
    );
  }
  return undefined;
}

function labelValue(raw: string): string | number {
  return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
}

/** The registered 'regex' extractor: spec.pattern, spec.names (in group order), spec.unit. */
export function extractRegexMetrics(text: string, spec: MetricSpec): ExtractResult {
  const names = spec.names ?? [];
  const reason = spec.pattern === undefined ? 'the regex extractor needs a pattern' : checkRegexSpec(spec.pattern, names);
  if (reason) return { metrics: [], problems: [reason] };
  const { regex, groups } = compileMetricPattern(spec.pattern!);
  const { value, label } = splitGroups(groups, names);
  const matches = [...text.matchAll(regex)];
  if (matches.length === 0) return { metrics: [], problems: [`pattern /${spec.pattern}/ matches nothing`] };

  const metrics: Metric[] = [];
  const problems: string[] = [];
  // Without label groups, repeated matches are told apart by their order.
  const numberMatches = label.length === 0 && matches.length > 1;
  matches.forEach((match, k) => {
    const labels: Record<string, string | number> = {};
    for (const l of label) if (match[l.index + 1] !== undefined) labels[l.name] = labelValue(match[l.index + 1]);
    if (numberMatches) labels.match = k + 1;
    value.forEach((groupIndex, n) => {
      const raw = match[groupIndex + 1];
      if (raw === undefined) return; // an optional group that did not take part
      const number = Number(raw.trim());
      if (raw.trim() === '' || !Number.isFinite(number)) {
        problems.push(`${names[n]}: '${raw}' is not a number (match ${k + 1})`);
        return;
      }
      metrics.push({ name: names[n], value: number, unit: spec.unit ?? '', higherIsBetter: spec.higherIsBetter, labels: { ...labels } });
    });
  });
  return { metrics, problems };
}
