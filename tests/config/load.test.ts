import { execFileSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES, parseYaml, readYamlFileSync } from '../../framework/config/load.ts';
import { ConfigError, formatIssue } from '../../framework/config/issue.ts';

describe('parseYaml', () => {
  it('locates keys, list items and values behind aliases', () => {
    const text = [
      'metadata:',
      '  model_name: m',
      'worker_config:',
      '  gen: &gen',
      '    max_batch_size: 32',
      '    tensor_parallel_size: 8',
      '  ctx: *gen',
      'items:',
      '  - a',
      '  - b',
    ].join('\n');
    const parsed = parseYaml(text, 'x.yaml');
    expect(parsed.issues).toEqual([]);
    expect(parsed.locate(['worker_config', 'gen', 'tensor_parallel_size'])).toEqual({ line: 6, col: 5 });
    expect(parsed.locate(['items', 1])).toEqual({ line: 10, col: 5 });
    // The alias resolves: ctx.max_batch_size points into the anchored mapping.
    expect(parsed.locate(['worker_config', 'ctx', 'max_batch_size'])).toEqual({ line: 5, col: 5 });
    expect((parsed.data as any).worker_config.ctx.max_batch_size).toBe(32);
    // A missing key is located at its closest present ancestor.
    expect(parsed.locate(['worker_config', 'gen', 'nope'])).toEqual({ line: 4, col: 3 });
  });

  it('rejects duplicate keys with their position', () => {
    const parsed = parseYaml('a: 1\nb:\n  c: 1\n  c: 2\n', 'dup.yaml');
    expect(parsed.data).toBeUndefined();
    expect(parsed.issues).toHaveLength(1);
    expect(formatIssue(parsed.issues[0])).toBe("dup.yaml:4:3 duplicate key 'c' (first at line 3, column 3); a key may appear once in a mapping");
  });

  it('rejects tabs used as indentation', () => {
    const parsed = parseYaml('a:\n\tb: 1\n', 'tabs.yaml');
    expect(parsed.issues.map(formatIssue).join('\n')).toMatch(/tabs\.yaml:2:\d+ .*[Tt]ab/);
  });

  it('reports an unclosed quote and binary garbage without throwing', () => {
    expect(parseYaml('a: "unclosed\nb: 2\n', 'q.yaml').issues.length).toBeGreaterThan(0);
    const garbage = Buffer.from([0x00, 0xff, 0x13, 0x3a, 0x7b, 0x5b, 0x22, 0x0a, 0x09, 0x2d]).toString('latin1');
    const parsed = parseYaml(garbage, 'bin.yaml');
    expect(parsed.issues.length).toBeGreaterThan(0);
    expect(parsed.issues[0]).toMatchObject({ file: 'bin.yaml', line: 1, col: 1 });
    expect(parsed.issues[0].message).toMatch(/not a YAML text file: control byte 0x00/);
  });

  it('reports an empty file', () => {
    expect(parseYaml('# only a comment\n', 'e.yaml').issues[0].message).toBe('the file is empty');
  });

  it('refuses an alias bomb instead of expanding it', () => {
    const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    const parsed = parseYaml(lines.join('\n'), 'bomb.yaml');
    expect(parsed.data).toBeUndefined();
    expect(parsed.issues[0].message).toMatch(/alias/i);
  });
});

describe('readYamlFileSync: what a config file may be', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'config-load-'));
  const issuesOf = (name: string) => readYamlFileSync(path.join(dir, name), `test_configs/disagg/perf/${name}`).issues.map(formatIssue);

  it('a FIFO, a link to /dev/zero and a folder are refused unread, in one sentence each', () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo.yaml')]);
    symlinkSync('/dev/zero', path.join(dir, 'zero.yaml'));
    execFileSync('mkdir', [path.join(dir, 'folder.yaml')]);
    expect(issuesOf('fifo.yaml')).toEqual(['test_configs/disagg/perf/fifo.yaml:1:1 not a regular file (a FIFO); expected a YAML text file']);
    expect(issuesOf('zero.yaml')).toEqual(['test_configs/disagg/perf/zero.yaml:1:1 not a regular file (a character device); expected a YAML text file']);
    expect(issuesOf('folder.yaml')).toEqual(['test_configs/disagg/perf/folder.yaml:1:1 not a regular file (a folder); expected a YAML text file']);
  });

  it('a config above MAX_CONFIG_BYTES is refused in one line without being parsed', () => {
    writeFileSync(path.join(dir, 'big.yaml'), `a: "${'x'.repeat(MAX_CONFIG_BYTES)}"\n`);
    expect(issuesOf('big.yaml')).toEqual([
      `test_configs/disagg/perf/big.yaml:1:1 is 256 KiB (${MAX_CONFIG_BYTES + 6} bytes), more than the 256 KiB a config may be (real configs are a few KiB); not read`,
    ]);
  });

  it('valid UTF-8 holding U+FFFD is read; bytes that are not UTF-8 are located', () => {
    writeFileSync(path.join(dir, 'fffd.yaml'), 'metadata:\n  description: "\uFFFD is a character"\n');
    expect(readYamlFileSync(path.join(dir, 'fffd.yaml'), 'fffd.yaml').data).toEqual({ metadata: { description: '\uFFFD is a character' } });
    writeFileSync(path.join(dir, 'latin1.yaml'), Buffer.from('metadata:\n  description: caf\xe9\n', 'latin1'));
    expect(issuesOf('latin1.yaml')).toEqual(['test_configs/disagg/perf/latin1.yaml:2:19 not a YAML text file: byte 0xE9 is not UTF-8 (save the file as UTF-8)']);
  });
});

describe('ConfigError', () => {
  it('carries the located issues and no stack frame of the framework', () => {
    const error = new ConfigError([{ file: 'x.yaml', line: 3, col: 1, message: 'duplicate key' }]);
    expect(error.stack).toBe('ConfigError: x.yaml:3:1 duplicate key');
  });
});
