// YAML written for a reader that loads it with PyYAML (the serving engine's option files, its
// router's config): YAML 1.1, as PyYAML reads it. A string that YAML 1.1 would read as something
// else (`yes`, `on`, `1:30`, `017`, `2002-12-14`) is quoted, a date is written as a date, and a
// float JavaScript writes with an exponent (`1e-7`, which PyYAML reads as text: its floats need a
// point and a signed exponent) is written as Python writes it (`1.0e-07`).
import { stringify, type CreateNodeOptions, type DocumentOptions, type SchemaOptions, type ToStringOptions } from 'yaml';

const exponentFloat = {
  identify: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && String(value).includes('e'),
  default: true,
  tag: 'tag:yaml.org,2002:float',
  // Only for writing: reading is runners/common/yaml-load.ts's.
  test: /^\b$/,
  resolve: (text: string) => Number(text),
  stringify: ({ value }: { value: unknown }) => {
    const [mantissa, exponent] = String(value).split('e');
    const sign = exponent.startsWith('-') ? '-' : '+';
    return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}e${sign}${exponent.replace(/^[-+]/, '').padStart(2, '0')}`;
  },
};

type Options = DocumentOptions & SchemaOptions & CreateNodeOptions & ToStringOptions;

/** `value` as YAML that PyYAML's safe_load reads back as the same data. */
export function dumpYamlForPyYaml(value: unknown, options: Options = {}): string {
  return stringify(value, { ...options, version: '1.1', customTags: (tags) => [exponentFloat, ...tags] });
}
