// The shapes of hostile config files bench/hostile-input.ts loads: each a function of the size in
// bytes it fills (just under it), each built to cost one part of reading a YAML file the most.
const fill = (bytes: number, head: string, unit: string, tail = ''): string => head + unit.repeat(Math.max(0, Math.floor((bytes - head.length - tail.length) / unit.length))) + tail;

/** A line-per-item shape: as many `line(i)` as fit. */
function lines(bytes: number, head: string, line: (i: number) => string): string {
  const out: string[] = [head];
  let size = head.length;
  for (let i = 0; ; i++) {
    const next = line(i);
    if (size + next.length > bytes) break;
    out.push(next);
    size += next.length;
  }
  return out.join('');
}

export const shapes: Record<string, (bytes: number) => string> = {
  'nested [': (b) => fill(b, 'a: ', '['),
  'nested [ closed': (b) => { const n = Math.floor((b - 4) / 2); return `a: ${'['.repeat(n)}${']'.repeat(n)}\n`; },
  'nested {a:': (b) => fill(b, 'a: ', '{a: '),
  'nested block maps': (b) => lines(b, '', (i) => `${' '.repeat(i)}k:\n`),
  'nested - - -': (b) => fill(b, 'a:\n', '- ', '1\n'),
  'keys, one mapping': (b) => lines(b, 'worker_config:\n  gen:\n', (i) => `    k${i}: ${i}\n`),
  'list items': (b) => lines(b, 'a:\n', () => '- 1\n'),
  'flow list': (b) => fill(b, 'a: [', '1,', '1]\n'),
  'flow mapping': (b) => lines(b, 'a: {', (i) => `k${i}: 1, `).replace(/, $/, '}') + '}\n',
  'one plain line': (b) => fill(b, 'a: ', 'x', '\n'),
  'one quoted line, escapes': (b) => fill(b, 'a: "', '\\u0041', '"\n'),
  'unclosed quote': (b) => fill(b, 'a: "', 'x'),
  'anchors and aliases': (b) => lines(b, 'a:\n', (i) => (i % 2 === 0 ? `- &a${i} [1, 2, 3]\n` : `- *a${i - 1}\n`)),
  'alias fan-out': (b) => lines(b, 'x: &x [1, 2, 3, 4, 5, 6, 7, 8]\na:\n', () => '- *x\n'),
  'merge keys': (b) => lines(b, 'base: &b {p: 1, q: 2}\na:\n', (i) => `  m${i}: {<<: *b, r: ${i}}\n`),
  'comments': (b) => lines(b, 'a: 1\n', () => '# a comment line\n'),
  'documents': (b) => lines(b, 'a: 1\n', () => '---\n'),
  'one long key': (b) => fill(b, '', 'k', ': 1\n'),
  'tabs (errors)': (b) => lines(b, 'a:\n', (i) => `\tk${i}: 1\n`),
  'duplicate keys': (b) => lines(b, 'a:\n', () => '  k: 1\n'),
  'blank lines': (b) => fill(b, 'a: 1\n', '\n'),
  // Many nestings each within the depth allowed (100): the parser's nodes for every level of each.
  'many 99-deep flow lists': (b) => lines(b, '', (i) => `k${i}: ${'['.repeat(99)}${']'.repeat(99)}\n`),
  'many 99-deep flow maps': (b) => lines(b, '', (i) => `k${i}: ${'{a: '.repeat(99)}1${'}'.repeat(99)}\n`),
  'many 50-deep block lists': (b) => lines(b, '', (i) => `k${i}:\n${Array.from({ length: 50 }, (_, d) => `${' '.repeat(2 * d)}- ${d === 49 ? '1' : ''}\n`).join('')}`),
};
