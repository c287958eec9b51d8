// A job-scoped secret: made when a job is submitted, handed to the job's processes in their
// environment (never on a command line, where `ps` shows it, nor in a file or a log: its variable's
// name marks it secret, framework/secrets.ts), and proven by every process that connects to
// another of the same job (the transfer engine's rendezvous store, nixlbench's ASIO beacon). A job
// id alone is no proof: `squeue` shows it to every user. As munge does for SLURM's daemons, the
// proof is a keyed hash of what the connection says (who it is, for which job), so the secret
// itself never travels; a connection without it is refused before it is answered.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The variable that carries the secret into a job's processes. */
export const JOB_SECRET_VARIABLE = 'DISAGG_JOB_SECRET';

/** A new secret: 32 random bytes, hex. */
export function newJobSecret(): string {
  return randomBytes(32).toString('hex');
}

/** The secret of the job this process belongs to, or undefined (a process started by hand). */
export function jobSecretOf(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const secret = env[JOB_SECRET_VARIABLE];
  return secret ? secret : undefined;
}

/** The proof that goes with a hello: a keyed hash of what the hello says (`context`). */
export function jobProof(secret: string, context: string): string {
  return createHmac('sha256', secret).update(context).digest('hex');
}

/** Whether `proof` proves the secret for `context` (compared in constant time). */
export function provesJobSecret(secret: string, context: string, proof: unknown): boolean {
  if (typeof proof !== 'string') return false;
  const expected = Buffer.from(jobProof(secret, context), 'utf8');
  const given = Buffer.from(proof, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
