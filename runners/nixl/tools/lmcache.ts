// LMCache's disaggregated-prefill tests: task 0 the sender, task 1 the receiver, each
// on its own GPU (CUDA_VISIBLE_DEVICES = the task, as the seed's two terminals), UCX over CUDA IPC:
//   UCX_TLS=cuda_ipc,cuda_copy,tcp python3 test_nixl_pipe_v2.py --role sender --num-rounds 5 --num-objs 500 --simulate-work
import type { ToolSpec } from '../tool-spec.ts';
import { argparseWords, toolPath, type ToolJob } from './tool-job.ts';

export interface LmcacheSection {
  python?: string;
  /** The test script (test_nixl_pipe.py, test_nixl_channel_v2.py, test_nixl_storage_backend.py, ...). */
  script: string;
  num_objs?: number;
  num_rounds?: number;
  num_chunks?: number;
  batch_size?: number;
  /** --simulate-work (pipe v2) or, with simulate_flag, the channel v2's --simulate-workload. */
  simulate_work?: boolean;
  simulate_flag?: 'simulate-work' | 'simulate-workload';
  /** Seconds the sender starts after the receiver (default 0). */
  sender_delay_s?: number;
  extra_args?: string[];
  env?: Record<string, string>;
}

export const LMCACHE_ROLES = ['sender', 'receiver'] as const;

export function lmcacheSpec(section: LmcacheSection, job: ToolJob): ToolSpec {
  const flags = argparseWords({
    'num-objs': section.num_objs,
    'num-rounds': section.num_rounds,
    'num-chunks': section.num_chunks,
    'batch-size': section.batch_size,
    [section.simulate_flag ?? 'simulate-work']: section.simulate_work,
  });
  const script = toolPath(job.configDir, section.script);
  return {
    tool: 'lmcache',
    commands: LMCACHE_ROLES.map((role) => [section.python ?? 'python3', script, '--role', role, ...flags, ...(section.extra_args ?? [])]),
    env: { UCX_TLS: 'cuda_ipc,cuda_copy,tcp', CUDA_VISIBLE_DEVICES: '{task}', ...section.env },
    startOrder: [1, 0], // the receiver first: the sender connects to it
    ordering: { kind: 'delay', seconds: section.sender_delay_s ?? 0 },
    logDir: job.logDir,
  };
}
