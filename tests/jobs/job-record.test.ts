// job.json: written whole or not at all (a full disk leaves the earlier file, or none, never a
// 0-byte or cut-off one), and read back as found, missing or unreadable (never "missing" for garbage).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJobRecordFile, writeJobRecord } from '../../framework/jobs/job-record.ts';
import { canMountTmpfs } from '../fixtures/can-mount.ts';

const root = mkdtempSync(path.join(tmpdir(), 'job-record-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const canMount = canMountTmpfs();

const ended = { id: '7', state: 'COMPLETED' as const, terminal: true };

describe('job.json', () => {
  it('reads back as found, missing, or unreadable with why', () => {
    const dir = path.join(root, 'kinds');
    mkdirSync(dir);
    expect(readJobRecordFile(dir)).toEqual({ kind: 'missing' });
    writeJobRecord(dir, 'slurm', { jobId: '7', submittedAt: 0 }, ended);
    expect(readJobRecordFile(dir)).toMatchObject({ kind: 'found', record: { jobId: '7', status: ended } });
    for (const [text, why] of [['', /is empty/], ['{"jobId": "7", "sta', /is not JSON/], ['{"jobId": 7}', /is not a job record/]] as const) {
      writeFileSync(path.join(dir, 'job.json'), text);
      const read = readJobRecordFile(dir);
      expect(read.kind).toBe('unreadable');
      expect(read.kind === 'unreadable' && read.why).toMatch(why);
    }
  });

  it.skipIf(!canMount)(`on a full disk: an error naming the file; the earlier job.json stays whole, no partial file${canMount ? '' : ' (skipped: cannot mount a tmpfs here)'}`, () => {
    const dir = path.join(root, 'full');
    mkdirSync(dir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
    try {
      writeJobRecord(dir, 'slurm', { jobId: '7', submittedAt: 0 }, ended);
      const before = readFileSync(path.join(dir, 'job.json'), 'utf8');
      try {
        writeFileSync(path.join(dir, 'filler'), Buffer.alloc(1024 * 1024));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      const huge = { ...ended, reason: 'x'.repeat(256 * 1024) }; // more than is left
      expect(() => writeJobRecord(dir, 'slurm', { jobId: '7', submittedAt: 0 }, huge)).toThrow(
        `cannot write ${path.join(dir, 'job.json')}: no space left on device (the file system of OUTPUT_PATH is full); what was written before stays whole`,
      );
      expect(readFileSync(path.join(dir, 'job.json'), 'utf8')).toBe(before);
      expect(readdirSync(dir).sort()).toEqual(['filler', 'job.json']);
    } finally {
      execFileSync('umount', ['-l', dir]);
    }
  });
});
