// The CT perftest configs (kvbench's YAML): defaults, paths relative to the config, and errors
// located at file:line:col with the key path.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readCtConfig, readSequentialConfig } from '../../runners/xfer/benches/traffic-pattern.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'traffic-pattern-'));
const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};
write('seed.txt', '0 0 1M 1M\n0 0 1M 1M\n0 0 0 5K\n0 0 0 5K\n');
write('two.txt', '0 1K\n2K 0\n');

describe('CT perftest config', () => {
  it('applies the reference defaults and resolves the matrix next to the config', () => {
    const c = readCtConfig(write('min.yaml', 'traffic_pattern:\n  matrix_file: seed.txt\n'), 4);
    expect(c.iters).toBe(1);
    expect(c.warmupIters).toBe(0);
    expect(c.pattern).toMatchObject({ matrixFile: path.join(dir, 'seed.txt'), shards: 1, memType: 'cuda', memory: 'gpu', op: 'WRITE', sleepBeforeSec: 0 });
    expect(c.pattern.matrix[0]).toEqual([0, 0, 1048576, 1048576]);
  });

  it('reads the seed example, NIXL spellings case-insensitively', () => {
    const c = readCtConfig(write('seed.yaml', 'iters: 50\nwarmup_iters: 10\ntraffic_pattern:\n  matrix_file: seed.txt\n  shards: 3\n  mem_type: DRAM\n  xfer_op: read\n'));
    expect(c).toMatchObject({ iters: 50, warmupIters: 10, pattern: { shards: 3, memType: 'dram', memory: 'host', op: 'READ' } });
  });

  it('locates a bad value, an unknown key and a matrix that does not fit the ranks', () => {
    expect(() => readCtConfig(write('b1.yaml', 'iters: 2\ntraffic_pattern:\n  matrix_file: seed.txt\n  shards: 0\n'))).toThrow(/b1\.yaml:4:3 traffic_pattern\.shards: must be an integer >= 1, got 0/);
    expect(() => readCtConfig(write('b2.yaml', 'traffic_pattern:\n  matrix_file: seed.txt\n  xfer_op: PUT\n'))).toThrow(/b2\.yaml:3:3 traffic_pattern\.xfer_op: must be one of WRITE, READ, got "PUT"/);
    expect(() => readCtConfig(write('b3.yaml', 'traffic_pattern:\n  matrix_file: seed.txt\n  shard: 2\n'))).toThrow(/b3\.yaml:3:3 traffic_pattern\.shard: is not a known key here/);
    expect(() => readCtConfig(write('b4.yaml', 'traffic_pattern:\n  matrix_file: seed.txt\n'), 2)).toThrow(/b4\.yaml:2:3 traffic_pattern\.matrix_file: .*seed\.txt: the matrix is 4 x 4 but the run has 2 ranks/);
    expect(() => readCtConfig(write('b5.yaml', 'iters: 3\n'))).toThrow(/b5\.yaml:1:1 traffic_pattern: is required/);
    expect(() => readCtConfig(write('b6.yaml', 'traffic_pattern:\n  matrix_file: nothere.txt\n'))).toThrow(/b6\.yaml:2:3 traffic_pattern\.matrix_file: matrix file nothere\.txt not found: neither .*nothere\.txt \(relative to the config's folder\) nor /);
  });

  it("passes on the matrix's own position of a bad cell", () => {
    write('badcell.txt', '0 1K\n0 1.5X\n');
    expect(() => readCtConfig(write('b7.yaml', 'traffic_pattern:\n  matrix_file: badcell.txt\n'))).toThrow(/b7\.yaml:2:3 traffic_pattern\.matrix_file: .*badcell\.txt:2:3 '1\.5X' is not a size/);
  });
});

describe('sequential CT perftest config', () => {
  it('reads the list with sleeps and metadata', () => {
    const file = write('seq.yaml', [
      'traffic_patterns:',
      '  - matrix_file: two.txt',
      '    metadata: { isl: 38328 }',
      '    sleep_before_launch_sec: 168.48',
      '  - matrix_file: two.txt',
      '    sleep_after_launch_sec: 0.5',
      '    mem_type: cpu',
    ].join('\n'));
    const patterns = readSequentialConfig(file, 2);
    expect(patterns.map((p) => [p.index, p.sleepBeforeSec, p.sleepAfterSec, p.memory])).toEqual([[0, 168.48, 0, 'gpu'], [1, 0, 0.5, 'host']]);
    expect(patterns[0].metadata).toEqual({ isl: 38328 });
  });

  it('refuses an empty list, a negative sleep, and matrices of different sizes', () => {
    expect(() => readSequentialConfig(write('s1.yaml', 'traffic_patterns: []\n'))).toThrow(/s1\.yaml:1:1 traffic_patterns: must be a non-empty list/);
    expect(() => readSequentialConfig(write('s2.yaml', 'traffic_patterns:\n  - matrix_file: two.txt\n    sleep_before_launch_sec: -1\n'))).toThrow(
      /s2\.yaml:3:5 traffic_patterns\[0\]\.sleep_before_launch_sec: must be a number of seconds >= 0, got -1/,
    );
    expect(() => readSequentialConfig(write('s3.yaml', 'traffic_patterns:\n  - matrix_file: two.txt\n  - matrix_file: seed.txt\n'))).toThrow(
      /s3\.yaml:3:5 traffic_patterns\[1\]\.matrix_file: .*seed\.txt is 4 x 4, the first pattern's matrix is 2 x 2/,
    );
  });
});
