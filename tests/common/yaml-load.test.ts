// The YAML rules every config kind shares (runners/common/yaml-load.ts): merge keys as PyYAML's
// SafeConstructor.flatten_mapping resolves them (each expected value below is what PyYAML 6.0's
// yaml.safe_load returns for the same text), and a located sentence for what cannot be data.
import { describe, expect, it } from 'vitest';
import { decodeYamlBytes, loadYaml, MAX_ALIAS_EXPANSION, MAX_FLOW_COLLECTIONS, MAX_NESTING } from '../../runners/common/yaml-load.ts';

const data = (text: string) => {
  const loaded = loadYaml(text);
  expect(loaded.problems).toEqual([]);
  return loaded.data;
};
const problems = (text: string) => loadYaml(text).problems;

describe('merge keys, as PyYAML resolves them', () => {
  it('<<: *base and <<: {..}: the mapping\'s own keys win wherever they stand', () => {
    expect(data('base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n')).toEqual({ base: { x: 1, y: 2 }, m: { x: 1, y: 3 } });
    expect(data('b: &b {a: 1}\nm:\n  a: 2\n  <<: *b\n')).toEqual({ b: { a: 1 }, m: { a: 2 } });
    expect(data('m:\n  <<: {a: 1, b: 2}\n  b: 3\n')).toEqual({ m: { a: 1, b: 3 } });
  });

  it('a list merges its mappings, the earlier winning; a later << wins over an earlier one', () => {
    const text = 'a: &a {k: a, x: 1}\nb: &b {k: b, y: 2}\nm:\n  <<: [*a, *b]\n';
    expect((data(text) as { m: unknown }).m).toEqual({ k: 'a', x: 1, y: 2 });
    expect(data('m:\n  <<: {a: 1}\n  <<: {b: 2, a: 3}\n')).toEqual({ m: { a: 3, b: 2 } });
    // PyYAML's key order too: merged keys first, in flatten order, then the own ones.
    expect(Object.keys((data('base: &b {x: 1, y: 2}\nn:\n  y: 9\n  <<: [*b, {z: 5}]\n') as { n: object }).n)).toEqual(['z', 'x', 'y']);
  });

  it('merges nest (a merged mapping that merges) and reach into disagg worker_config verbatim', () => {
    const text = [
      'defaults: &defaults {max_batch_size: 32, tensor_parallel_size: 4}',
      'gen_base: &gen {<<: *defaults, enable_attention_dp: true}',
      'worker_config:',
      '  gen:',
      '    <<: *gen',
      '    max_batch_size: 64',
    ].join('\n');
    expect((data(text) as { worker_config: unknown }).worker_config).toEqual({ gen: { max_batch_size: 64, tensor_parallel_size: 4, enable_attention_dp: true } });
  });

  it('a quoted "<<" is an ordinary key, as in PyYAML', () => {
    expect(data('m:\n  "<<": {a: 1}\n')).toEqual({ m: { '<<': { a: 1 } } });
  });

  it('a merge of something that is not a mapping is refused where it stands', () => {
    expect(problems('m:\n  <<: 5\n')).toEqual([{ line: 2, col: 7, message: 'a merge key (<<) takes a mapping or a list of mappings, got number 5' }]);
    expect(problems('m:\n  <<: [{a: 1}, 2]\n')).toEqual([{ line: 2, col: 16, message: 'a merge key (<<) takes mappings, got number 2 in its list' }]);
  });

  it('locates a merged key where it is written', () => {
    const loaded = loadYaml('base: &b\n  p: 1\n  q: 2\nm:\n  <<: *b\n  r: 3\n');
    expect(loaded.locate(['m', 'p'])).toEqual({ line: 2, col: 3 });
    expect(loaded.locate(['m', 'r'])).toEqual({ line: 6, col: 3 });
    expect(loaded.locate(['m', 'nope'])).toEqual({ line: 4, col: 1 });
  });
});

describe('what cannot be data is one located sentence', () => {
  it('a recursive alias (a value that contains itself) is refused at the alias', () => {
    expect(problems('metadata: &m {description: x, self: *m}\n')).toEqual([
      { line: 1, col: 37, message: '*m is inside the value it names (&m at line 1): a value cannot contain itself' },
    ]);
    // Deeper, in a block mapping as worker_config is written.
    expect(problems('worker_config:\n  gen:\n    moe_config: &mc\n      backend: TRTLLM\n      loop: [*mc]\n')[0]).toMatchObject({ line: 5, col: 14 });
    // A merge of the mapping being built is the same loop.
    expect(problems('m: &m\n  a: 1\n  <<: *m\n')[0].message).toMatch(/^\*m is inside the value it names/);
    // An alias to a finished value is fine, however often.
    expect(data('a: &a {x: 1}\nb: [*a, *a]\nc: *a\n')).toEqual({ a: { x: 1 }, b: [{ x: 1 }, { x: 1 }], c: { x: 1 } });
  });

  it('an alias to no anchor, and an alias bomb', () => {
    expect(problems('a: *nope\n')).toEqual([{ line: 1, col: 4, message: '*nope names no anchor &nope defined before it' }]);
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const bomb = problems(lines.join('\n'));
    expect(bomb).toHaveLength(1);
    expect(bomb[0].message).toMatch(new RegExp(`aliases expand it by \\d+ values, more than the ${MAX_ALIAS_EXPANSION} taken`));
  });

  it('a duplicate key names the key and where it first stands', () => {
    expect(problems('a: 1\nb:\n  c: 1\n  c: 2\n')).toEqual([
      { line: 4, col: 3, message: "duplicate key 'c' (first at line 3, column 3); a key may appear once in a mapping" },
    ]);
    expect(problems('{x: 1, x: 2}\n')[0].message).toMatch(/^duplicate key 'x'/);
  });

  it('several documents are refused in our words, at the second', () => {
    expect(problems('a: 1\n---\nb: 2\n')).toEqual([
      { line: 2, col: 1, message: "holds 2 YAML documents (the second starts here); a config is one document: remove the '---' line or split the file" },
    ]);
    // One document with its markers is one document.
    expect(data('---\na: 1\n...\n')).toEqual({ a: 1 });
  });

  it('an unclosed quote is reported where it opens', () => {
    expect(problems('a: 1\nmodel_name: "standin\nb: 2\nc: 3\n')).toEqual([
      { line: 2, col: 13, message: 'this " opens a quoted value that is never closed (the text ends at line 5, column 1)' },
    ]);
    expect(problems("x:\n  y: 'open\n")[0]).toMatchObject({ line: 2, col: 6, message: expect.stringMatching(/^this ' opens a quoted value/) });
  });

  it('an unclosed [ or { is reported where it opens', () => {
    expect(problems('a: [1, 2\nb: 3\n')).toEqual([
      { line: 1, col: 4, message: 'this [ opens a list whose closing ] is missing, or whose next line is not indented past its key (the list breaks off at line 2, column 1)' },
    ]);
    expect(problems('x:\n  a: {p: 1\n  b: 3\n')[0]).toMatchObject({ line: 2, col: 6, message: expect.stringMatching(/^this \{ opens a mapping whose closing \} is missing.*\(the mapping breaks off at line 3, column 3\)$/) });
  });

  it('whole numbers beyond 2^53 - 1 are refused instead of rounded; floats stay floats', () => {
    expect(problems('ranks: 9007199254740993\n')).toEqual([{
      line: 1, col: 8,
      message: '9007199254740993 is a whole number beyond 9007199254740991 (2^53 - 1), the largest held exactly here; it would be read as 9007199254740992',
    }]);
    expect(problems('warmup_iters: 9999999999999999999999\n')[0].message).toMatch(/^9999999999999999999999 is a whole number beyond/);
    expect(data('a: 9007199254740991\nb: -9007199254740991\nc: 1.0e+300\nd: .inf\n')).toEqual({ a: 9007199254740991, b: -9007199254740991, c: 1e300, d: Infinity });
    expect(problems('a: 0x20000000000001\n')[0].message).toMatch(/^0x20000000000001 is a whole number beyond/);
  });

  it('lists or mappings nested past MAX_NESTING are one located problem, never a stack overflow', () => {
    const deep = (n: number) => `a: ${'['.repeat(n)}${']'.repeat(n)}\n`;
    expect(data(deep(MAX_NESTING - 1))).toBeDefined();
    expect(problems(deep(MAX_NESTING + 5))).toEqual([{ line: 1, col: 4 + MAX_NESTING - 1, message: `nested more than ${MAX_NESTING} lists or mappings deep (a config nests a few levels)` }]);
    for (const n of [1000, 20_000]) {
      const found = problems(deep(n));
      expect(found.length, `${n} levels`).toBeGreaterThan(0);
      expect(found[0].message).toMatch(/nested (more than|too deeply)/);
    }
  });

  it('nesting is counted before the parse, at the bracket that passes the bound; brackets in text are text', () => {
    const many = '['.repeat(3 * MAX_NESTING);
    expect(problems(`a:\n  b: ${'['.repeat(1 << 17)}\n`)).toEqual([{ line: 2, col: 6 + MAX_NESTING - 1, message: `nested more than ${MAX_NESTING} lists or mappings deep (a config nests a few levels)` }]);
    expect(problems(`a:\n${'- '.repeat(MAX_NESTING)}1\n`)[0]).toMatchObject({ line: 2, col: 2 * (MAX_NESTING - 1) + 1 });
    const text = `a: "${many}"\nb: '${many}'\n# ${many}\nc: |\n  ${many}\n  ${many}\nd: x${many}\ne: [1, "${many}", {f: '${many}'}]\n`;
    expect(data(text)).toEqual({ a: many, b: many, c: `${many}\n${many}\n`, d: `x${many}`, e: [1, many, { f: many }] });
  });

  it('many legal nestings: past MAX_FLOW_COLLECTIONS flow lists or mappings, refused before the parse at the one past it; block list items are not counted', () => {
    const lines = (n: number, depth: number) => Array.from({ length: n }, (_, i) => `k${i}: ${'['.repeat(depth)}${']'.repeat(depth)}\n`).join('');
    const per = 99;
    const fits = Math.floor(MAX_FLOW_COLLECTIONS / per);
    expect(data(lines(fits, per))).toBeDefined();
    expect(problems(lines(fits + 1, per))).toEqual([{ line: fits + 1, col: 4 + String(fits).length + MAX_FLOW_COLLECTIONS - fits * per, message: `opens more than ${MAX_FLOW_COLLECTIONS} flow lists or mappings ([ ], { }, '- - ' lines; a config holds a few dozen)` }]);
    // A long block list, one item a line, opens one list.
    expect(data(`a:\n${'- 1\n'.repeat(MAX_FLOW_COLLECTIONS + 10)}`)).toEqual({ a: Array(MAX_FLOW_COLLECTIONS + 10).fill(1) });
  });

  it('a key that is a list or a mapping is refused (PyYAML: unhashable key)', () => {
    expect(problems('? [a, b]\n: 1\n')).toEqual([{ line: 1, col: 3, message: 'a key must be a single value, not a list or a mapping' }]);
  });

  it('a key named __proto__ is data, not the prototype', () => {
    const value = data('__proto__: {a: 1}\nb: 2\n') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__', 'b']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});

describe('text', () => {
  it('lone CR line ends are line ends, as PyYAML reads them; positions count them as lines', () => {
    const loaded = loadYaml('a: 1\rb:\r  c: 2\r');
    expect(loaded.data).toEqual({ a: 1, b: { c: 2 } });
    expect(loaded.locate(['b', 'c'])).toEqual({ line: 3, col: 3 });
    expect(data('a: 1\r\nb: 2\r\n')).toEqual({ a: 1, b: 2 });
  });

  it('U+FFFD written in valid UTF-8 is text; bytes that are not UTF-8 are refused at the first', () => {
    const ok = decodeYamlBytes(Buffer.from('name: "\uFFFD replacement"\n', 'utf8'));
    expect(ok.text).toBe('name: "\uFFFD replacement"\n');
    expect(data(ok.text!)).toEqual({ name: '\uFFFD replacement' });
    expect(decodeYamlBytes(Buffer.from([0x61, 0x3a, 0x20, 0x31, 0x0a, 0x62, 0x3a, 0x20, 0xc3, 0x28, 0x0a])).problem).toEqual({
      line: 2, col: 4, message: 'not a YAML text file: byte 0xC3 is not UTF-8 (save the file as UTF-8)',
    });
    // Overlong and surrogate forms are not UTF-8 either.
    expect(decodeYamlBytes(Buffer.from([0x61, 0xc0, 0xaf])).problem?.col).toBe(2);
    expect(decodeYamlBytes(Buffer.from([0x61, 0xed, 0xa0, 0x80])).problem?.col).toBe(2);
    // A control byte before the first bad byte is the file's first problem.
    expect(decodeYamlBytes(Buffer.from([0x61, 0x3a, 0x0a, 0x20, 0x00, 0xff])).problem?.message).toBe('not a YAML text file: control byte 0x00');
  });

  it('a UTF-8 byte-order mark is dropped; UTF-16 is refused', () => {
    expect(decodeYamlBytes(Buffer.from('\uFEFFa: 1\n', 'utf8')).text).toBe('a: 1\n');
    expect(decodeYamlBytes(Buffer.from('\uFEFFa: 1\n', 'utf16le')).problem?.message).toBe('UTF-16 text (byte-order mark FF FE); save the file as UTF-8');
  });

  it('a file of comments only is empty', () => {
    expect(problems('# only a comment\n')).toEqual([{ line: 1, col: 1, message: 'the file is empty' }]);
    expect(problems('')).toEqual([{ line: 1, col: 1, message: 'the file is empty' }]);
  });
});

// Each expected value is what PyYAML 6.0's yaml.safe_load returns for the same text (YAML 1.1).
describe('unquoted scalars, as PyYAML reads them (YAML 1.1)', () => {
  it('yes/no/on/off in their three spellings are booleans; other spellings and y/n are text', () => {
    expect(data('a: yes\nb: No\nc: ON\nd: off\ne: True\nf: FALSE\n')).toEqual({ a: true, b: false, c: true, d: false, e: true, f: false });
    expect(data('a: yEs\nb: y\nc: n\nd: oN\n')).toEqual({ a: 'yEs', b: 'y', c: 'n', d: 'oN' });
  });

  it('017 is octal, 0b101 binary, 1_000 a thousand, 1:30 base 60; 0o17 and 018 are text', () => {
    expect(data('a: 017\nb: 0b101\nc: 1_000\nd: 1:30\ne: -0x1F\nf: +12\ng: 0\nh: 190:20:30\n')).toEqual({ a: 15, b: 5, c: 1000, d: 90, e: -31, f: 12, g: 0, h: 685230 });
    expect(data('a: 0o17\nb: 018\nc: 01:30\n')).toEqual({ a: '0o17', b: '018', c: '01:30' });
  });

  it('a float needs a point and a signed exponent: 1e3 and 1.0e3 are text, 1.0e+3 a float', () => {
    expect(data('a: 1e3\nb: 1.0e3\nc: 1.0e+3\nd: .5\ne: 1.\nf: 1_0.5\ng: 1:30.5\nh: -.inf\ni: .NaN\n')).toEqual({ a: '1e3', b: '1.0e3', c: 1000, d: 0.5, e: 1, f: 10.5, g: 90.5, h: -Infinity, i: NaN });
  });

  it('~, null, Null, NULL and nothing are null; a quoted or tagged scalar keeps its own reading', () => {
    expect(data('a: ~\nb: Null\nc:\nd: "yes"\ne: \'017\'\nf: !!str 1:30\n')).toEqual({ a: null, b: null, c: null, d: 'yes', e: '017', f: '1:30' });
  });

  it('a date is a date, and a date with a time of day is one instant (its offset applied)', () => {
    const d = data('a: 2002-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-12-14 21:59:43.10\nd: 2002-1-2 3:04:05\n') as Record<string, Date>;
    expect(d.a).toEqual(new Date(Date.UTC(2002, 11, 14)));
    expect(d.b).toEqual(new Date(Date.UTC(2001, 11, 15, 2, 59, 43, 100)));
    expect(d.c).toEqual(new Date(Date.UTC(2001, 11, 14, 21, 59, 43, 100)));
    expect(d.d).toEqual(new Date(Date.UTC(2002, 0, 2, 3, 4, 5)));
    expect(data('a: 2002-12-1\n')).toEqual({ a: '2002-12-1' });
  });

  it('what PyYAML cannot construct is one located sentence: a day that does not exist, a plain =', () => {
    expect(problems('x: 1\nday: 2002-02-30\n')).toEqual([{ line: 2, col: 6, message: '2002-02-30 reads as a date (YAML 1.1, as PyYAML reads it) but is no valid one; quote it for the text' }]);
    expect(problems('op: =\n')[0]).toMatchObject({ line: 1, col: 5, message: expect.stringMatching(/^a plain '=' is YAML 1\.1's value key/) });
    expect(problems('a: 0b_\n')[0].message).toMatch(/^0b_ is no whole number/);
  });

  it('keys are resolved too: yes: is the key true, 017: the key 15', () => {
    expect(data('yes: 1\n017: 2\n')).toEqual({ true: 1, 15: 2 });
  });
});
