// A file's stamp stands for its content only where no write can have kept it (git's racy-clean
// rule): a file written within RACY_MARGIN_MS of the read gets none, and any change of inode,
// size, modification or change time makes the stamp stale.
import type { Stats } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RACY_MARGIN_MS, stampOf, unchangedSince } from '../../framework/config/file-stamp.ts';

const readAt = 1_765_000_000_000;
const stat = (over: Partial<Stats> = {}, isFile = true) =>
  ({ ino: 42, size: 100, mtimeMs: readAt - 60_000.25, ctimeMs: readAt - 30_000.5, isFile: () => isFile, ...over }) as Stats;

describe('file stamps', () => {
  it('stamps a regular file last written before the margin, and knows it again unchanged', () => {
    const stamp = stampOf(stat(), readAt);
    expect(stamp).toBeDefined();
    expect(unchangedSince(stamp, stat())).toBe(true);
  });

  it('gives no stamp to a file modified or changed within the margin of the read (either side), nor to what is not a regular file', () => {
    expect(stampOf(stat({ mtimeMs: readAt - RACY_MARGIN_MS + 1 }), readAt)).toBeUndefined();
    // `touch -d` sets an old mtime, but the change time is the write's
    expect(stampOf(stat({ ctimeMs: readAt - 10 }), readAt)).toBeUndefined();
    expect(stampOf(stat({ mtimeMs: readAt + 5_000, ctimeMs: readAt + 5_000 }), readAt)).toBeUndefined();
    expect(stampOf(stat({}, false), readAt)).toBeUndefined();
  });

  it('is stale when the inode, the size, the modification or the change time differ (a sub-millisecond difference too)', () => {
    const stamp = stampOf(stat(), readAt);
    for (const changed of [{ ino: 43 }, { size: 101 }, { mtimeMs: readAt - 60_000.2 }, { ctimeMs: readAt - 30_000.499 }]) {
      expect(unchangedSince(stamp, stat(changed))).toBe(false);
    }
    expect(unchangedSince(stamp, stat({}, false))).toBe(false);
    expect(unchangedSince(undefined, stat())).toBe(false);
    expect(unchangedSince(stamp, undefined)).toBe(false);
  });
});
