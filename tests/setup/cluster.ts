// What tests that need the real local SLURM cluster import: its environment and describeCluster,
// which skips the suite (saying why) when DISAGG_NO_SLURM=1.
import { describe, inject } from 'vitest';
import type {} from './global-setup.ts'; // the ProvidedContext declaration of slurmConf

export const slurmDisabled = process.env.DISAGG_NO_SLURM === '1';
export const noSlurmReason = 'DISAGG_NO_SLURM=1: the local SLURM cluster is off';

/** SLURM_CONF of the local cluster (from the global setup) and the PATH with its commands. */
export function clusterEnv(): { SLURM_CONF: string; PATH: string } {
  const conf = inject('slurmConf') || process.env.SLURM_CONF;
  if (!conf) throw new Error(`no local SLURM cluster: ${slurmDisabled ? noSlurmReason : 'the cluster project\'s global setup did not run (a test that needs the cluster belongs to the cluster project, not unit: vitest.config.ts)'}`);
  return { SLURM_CONF: conf, PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
}

type Describe = typeof describe | typeof describe.concurrent;

function describeWith(base: Describe) {
  return (name: string, body: () => void): void => {
    if (slurmDisabled) base.skip(`${name} (skipped: ${noSlurmReason})`, body);
    else base(name, body);
  };
}

/**
 * `describe` for suites that run against the cluster (`.concurrent` too); skipped, with the reason
 * in the suite's name, when DISAGG_NO_SLURM=1.
 */
export const describeCluster = Object.assign(describeWith(describe), { concurrent: describeWith(describe.concurrent) });
