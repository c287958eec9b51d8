// DEBUG_MODE=1: no submission, no waiting. Each test's job is the one whose logs are already in
// its folder; its final state is the one job.json recorded (COMPLETED when an older run left
// none). A job.json that is there but unreadable (truncated, garbage) is not "no record": the
// job's end is unknown, and its test fails saying so. Nothing is renamed or deleted, so a replay
// can be repeated.
import { existsSync, readdirSync } from 'node:fs';
import { jobIdsOfOutputs, jobOutputFiles, readJobRecordFile } from './log-folder.ts';
import { SchedulerError, type JobLogs, type JobRequest, type JobStatus, type Scheduler, type SchedulerCapabilities } from './scheduler.ts';

// Nothing runs: every job ended before the replay began.
const capabilities: SchedulerCapabilities = {
  jobsOutliveRun: false, costlyPolls: false, pollFailureSpanMs: 0,
  arrays: false, gres: false, segment: false, requeue: false, nodeLists: false,
};

/** Not registered: DEBUG_MODE=1 chooses it (create.ts), never SCHEDULER. */
export class ReplayScheduler implements Scheduler {
  readonly name = 'replay';
  readonly capabilities = capabilities;
  private readonly statuses = new Map<string, JobStatus>();

  /** DEBUG_JOB_ID names the job when a folder does not say which job wrote it. */
  constructor(private readonly debugJobId?: string) {}

  async submit(request: JobRequest): Promise<string> {
    if (!existsSync(request.logDir)) {
      throw new SchedulerError(`DEBUG_MODE: no logs to replay for ${request.name}: ${request.logDir} does not exist`, 'replay');
    }
    const read = readJobRecordFile(request.logDir);
    const record = read.kind === 'found' ? read.record : undefined;
    const unreadable = read.kind === 'unreadable' ? `${read.file} ${read.why}` : undefined;
    const jobId = record?.jobId ?? this.jobIdFromOutput(request.logDir) ?? this.debugJobId;
    if (!jobId) {
      const why = unreadable ? `${unreadable}, and no slurm-<job id>.out names the job` : `cannot tell which job wrote ${request.logDir}`;
      throw new SchedulerError(`DEBUG_MODE: ${why}: set DEBUG_JOB_ID`, 'replay');
    }
    const status: JobStatus = record?.status ?? (unreadable
      ? { id: jobId, state: 'UNKNOWN', terminal: true, reason: `${unreadable}: how the job ended is unknown` }
      : { id: jobId, state: 'COMPLETED', terminal: true, reason: 'replayed (no job.json: state assumed)' });
    this.statuses.set(jobId, { ...status, id: jobId });
    return jobId;
  }

  async poll(ids: string[]): Promise<Map<string, JobStatus>> {
    const out = new Map<string, JobStatus>();
    for (const id of ids) {
      const status = this.statuses.get(id);
      if (status) out.set(id, status);
    }
    return out;
  }

  async cancel(): Promise<void> {}

  cancelNow(): string | undefined {
    return undefined;
  }

  logs(id: string, request: JobRequest): JobLogs {
    return jobOutputFiles(request.logDir, id);
  }

  async close(): Promise<void> {}

  private jobIdFromOutput(logDir: string): string | undefined {
    const outputs = jobIdsOfOutputs(readdirSync(logDir));
    return outputs.length === 1 ? outputs[0] : undefined;
  }
}
