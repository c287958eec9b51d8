// Discovery as upstream's ConfigLoader.scan_configs walks test_configs/ (types, categories,
// *.yaml), with nothing named like a config skipped silently and every symlink loop one notice.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverConfigs } from '../../framework/config/discover.ts';
import { identityOf, pythonStem } from '../../framework/config/ids.ts';

function workDir(): { dir: string; put(rel: string, text?: string): void; link(rel: string, target: string): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'discover-'));
  return {
    dir,
    put(rel, text = 'metadata: {}\n') {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    },
    link(rel, target) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      symlinkSync(target, path.join(dir, rel));
    },
  };
}

describe('discoverConfigs', () => {
  it('two symlink loops: each real folder read once, each loop one notice naming the link', () => {
    const w = workDir();
    w.put('test_configs/nixl/perf/good.yaml');
    w.link('test_configs/nixl/perf/loop.yaml', '.');
    w.link('test_configs/nixl/perf/sub/up', '../..');
    w.put('test_configs/nixl/perf/sub/misplaced.yaml');
    const found = discoverConfigs(w.dir);
    // loop.yaml is named like a config: it is one (a folder, which its test says), not a walk.
    expect(found.files.map((f) => f.displayFile)).toEqual(['test_configs/nixl/perf/good.yaml', 'test_configs/nixl/perf/loop.yaml']);
    expect(found.misplaced).toEqual(['test_configs/nixl/perf/sub/misplaced.yaml']);
    expect(found.notices).toEqual(['test_configs/nixl/perf/sub/up: a link back to test_configs/nixl, which holds it (a loop); not followed']);
  });

  it('a link below a category to a folder read already, or out of test_configs/, is not followed, once said', () => {
    const w = workDir();
    w.put('test_configs/disagg/perf/a.yaml');
    w.link('test_configs/disagg/perf/again', '../perf');
    w.link('test_configs/disagg/perf/etc', '/etc');
    w.link('test_configs/disagg/perf/x/root', '../../..');
    const found = discoverConfigs(w.dir);
    expect(found.files.map((f) => f.id)).toEqual(['disagg_perf_a']);
    expect(found.notices).toEqual([
      'test_configs/disagg/perf/again: a link back to test_configs/disagg/perf, which holds it (a loop); not followed',
      'test_configs/disagg/perf/etc: a link to a folder outside test_configs/ below a category; not followed (configs live at test_configs/<test_type>/<category>/<name>.yaml)',
      'test_configs/disagg/perf/x/root: a link back to test_configs, which holds it (a loop); not followed',
    ]);
  });

  it('a linked category is a category, as upstream iterdir/is_dir sees it (its own ids)', () => {
    const w = workDir();
    w.put('test_configs/disagg/perf/a.yaml');
    w.link('test_configs/disagg/perf-copy', 'perf');
    w.link('test_configs/disagg/self', '.');
    const found = discoverConfigs(w.dir);
    expect(found.files.map((f) => f.id)).toEqual(['disagg_perf-copy_a', 'disagg_perf_a']);
    expect(found.notices).toEqual(['test_configs/disagg/self: a link back to test_configs/disagg, which holds it (a loop); not followed']);
  });

  it('nothing named like a config is skipped silently: folders, leading dots, backslashes, CR, upper case', () => {
    const w = workDir();
    w.put('test_configs/disagg/perf/.hidden.yaml');
    w.put('test_configs/disagg/perf/a\\b.yaml');
    w.put('test_configs/disagg/perf/cr\r.yaml');
    w.put('test_configs/disagg/perf/.yaml');
    w.put('test_configs/disagg/perf/folder.yaml/inside.txt');
    w.put('test_configs/disagg/perf/LOUD.YAML');
    w.put('test_configs/disagg/perf/notes.txt');
    w.put('test_configs/disagg/top.yml');
    w.put('test_configs/disagg/perf/templates/t.yaml');
    const found = discoverConfigs(w.dir);
    expect(found.files.map((f) => [f.id, f.displayFile])).toEqual([
      ['disagg_perf_.hidden', 'test_configs/disagg/perf/.hidden.yaml'],
      ['disagg_perf_.yaml', 'test_configs/disagg/perf/.yaml'],
      ['disagg_perf_a\\b', 'test_configs/disagg/perf/a\\b.yaml'],
      ['disagg_perf_cr\r', 'test_configs/disagg/perf/cr\\r.yaml'],
      ['disagg_perf_folder', 'test_configs/disagg/perf/folder.yaml'],
    ]);
    expect(found.misplaced).toEqual(['test_configs/disagg/top.yml']);
    expect(found.notices).toEqual(['test_configs/disagg/perf/LOUD.YAML: ignored, a config\'s name ends in .yaml or .yml (lower case)']);
  });

  it('a missing test_configs/ is no configs', () => {
    expect(discoverConfigs(mkdtempSync(path.join(tmpdir(), 'discover-empty-')))).toEqual({ files: [], misplaced: [], notices: [] });
  });
});

describe('ids', () => {
  it('stems as pathlib does; a backslash is part of a name', () => {
    expect(pythonStem('x.yaml')).toBe('x');
    expect(pythonStem('.yaml')).toBe('.yaml');
    expect(pythonStem('..yaml')).toBe('.');
    expect(pythonStem('a.b.yaml')).toBe('a.b');
    expect(identityOf('test_configs/disagg/perf/a\\b.yaml')?.id).toBe('disagg_perf_a\\b');
  });
});
