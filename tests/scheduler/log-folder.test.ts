// A test's log folder (framework/scheduler/log-folder.ts): the names of its files built and parsed
// back by one module; job.json written whole or not at all (a full disk leaves the earlier file, or
// none, never a 0-byte or cut-off one) and read back as found, missing or unreadable (never
// "missing" for garbage); an earlier job's folder set aside whole; a DEBUG_MODE replay of folders
// in the layout an earlier version wrote (tests/fixtures/log-folders/).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  jobIdsOfOutputs, jobOutputFiles, readJobRecordFile, sbatchOutputPatterns, setAsideEarlierLogs, testLogDir, writeJobRecord,
} from '../../framework/scheduler/log-folder.ts';
import { ReplayScheduler } from '../../framework/scheduler/replay.ts';
import { sbatchArgs } from '../../framework/scheduler/slurm.ts';
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

describe('the folder layout', () => {
  it('builds the names the schedulers use and parses the job id back from them', () => {
    const dir = testLogDir('/out', 'disagg_perf_x');
    expect(dir).toBe('/out/slurm_logs/disagg_perf_x');
    const files = jobOutputFiles(dir, '4242');
    expect(files).toEqual({ stdout: `${dir}/slurm-4242.out`, stderr: `${dir}/slurm-4242.err` });
    expect(jobIdsOfOutputs([path.basename(files.stdout), path.basename(files.stderr), 'job.json', 'slurm-L1-x-2.out'])).toEqual(['4242', 'L1-x-2']);
    // sbatch's own pattern: %j becomes the id, giving the same names
    const patterns = sbatchOutputPatterns(dir);
    expect(patterns.output.replace('%j', '4242')).toBe(files.stdout);
    expect(patterns.error.replace('%j', '4242')).toBe(files.stderr);
    const args = sbatchArgs({ name: 't', scriptPath: `${dir}/job.sh`, logDir: dir, workDir: '/w', resources: { nodes: 1, ntasks: 1, timeLimitSec: 60 } });
    expect(args).toEqual(expect.arrayContaining([`--output=${patterns.output}`, `--error=${patterns.error}`]));
  });

  it("sets an earlier job's folder aside whole, named by its job", () => {
    const dir = path.join(root, 'slurm_logs', 'again');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'slurm-55.out'), 'earlier\n');
    const moved = setAsideEarlierLogs(dir);
    expect(moved).toBe(`${dir}.55`);
    expect(readFileSync(path.join(moved!, 'slurm-55.out'), 'utf8')).toBe('earlier\n');
    expect(existsSync(dir)).toBe(false);
    mkdirSync(dir);
    expect(setAsideEarlierLogs(dir)).toBeUndefined(); // an empty folder stays
  });
});

describe('DEBUG_MODE replay of log folders an earlier version wrote', () => {
  const fixture = path.resolve(import.meta.dirname, '../fixtures/log-folders/2026-11-25');
  const copy = path.join(root, 'earlier-run');
  cpSync(fixture, copy, { recursive: true });
  const request = (testId: string) => {
    const logDir = testLogDir(copy, testId);
    return { name: testId, scriptPath: path.join(logDir, 'job.sh'), logDir, workDir: copy, resources: { nodes: 1, ntasks: 1, timeLimitSec: 1 } };
  };

  it('takes the job and how it ended from job.json, and reads its slurm-<id> logs', async () => {
    const replay = new ReplayScheduler();
    const r = request('disagg_perf_ended_failed');
    const id = await replay.submit(r);
    expect(id).toBe('4242');
    expect((await replay.poll([id])).get(id)).toMatchObject({ id: '4242', state: 'FAILED', terminal: true, exitCode: 3, nodes: ['n1'] });
    const logs = replay.logs(id, r);
    expect(readFileSync(logs.stdout, 'utf8')).toContain('server exited with code 3');
    expect(readFileSync(logs.stderr, 'utf8')).toBe('error: server 0 died\n');
  });

  it('names the job by its slurm-<id>.out where no job.json was written, and assumes it completed', async () => {
    const replay = new ReplayScheduler();
    const r = request('disagg_perf_no_record');
    const id = await replay.submit(r);
    expect(id).toBe('977');
    expect((await replay.poll([id])).get(id)).toMatchObject({ state: 'COMPLETED', terminal: true, reason: 'replayed (no job.json: state assumed)' });
    expect(readFileSync(replay.logs(id, r).stdout, 'utf8')).toBe('all done\n');
    expect(readdirSync(r.logDir).sort()).toEqual(['slurm-977.err', 'slurm-977.out']); // a replay writes nothing
  });
});
