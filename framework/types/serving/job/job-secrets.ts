// Secret-named assignments from a config (`worker_env_var: "HF_TOKEN=hf_..."`) must not be written
// into job.sh or env_vars.json (framework/secrets.ts says which names count). Their values travel
// in the job's environment (BuiltJob.env: sbatch's environment, the local scheduler's export);
// the script only expands the variable: `env 'HF_TOKEN='"${HF_TOKEN}" ...`.
import { isSecretName, REDACTED } from '../../../secrets.ts';
import { JoinedWord, ShellVar, type EnvAssignment, type Word } from '../../../../runners/common/shell.ts';

export class JobSecrets {
  /** What the job's environment must hold: carried variable -> value. */
  readonly env: Record<string, string> = {};

  /** The `NAME=value` word for a step's `env`: secrets expand a job variable, others are literal. */
  word(assignment: EnvAssignment): Word {
    if (!isSecretName(assignment.name)) return `${assignment.name}=${assignment.value}`;
    return new JoinedWord([`${assignment.name}=`, new ShellVar(this.carry(assignment))]);
  }

  /** The value as env_vars.json shows it. */
  shown(assignment: EnvAssignment): string {
    return isSecretName(assignment.name) ? REDACTED : assignment.value;
  }

  /** Carried variables, in the order they were first needed. */
  get names(): string[] {
    return Object.keys(this.env);
  }

  /**
   * The job variable carrying this value: the name itself, unless another step sets the same name
   * to another value (then DISAGG_SECRET_<n>_<name>, still secret-named, so still redacted).
   */
  private carry({ name, value }: EnvAssignment): string {
    for (let n = 1; ; n++) {
      const carrier = n === 1 ? name : `DISAGG_SECRET_${n}_${name}`;
      if (this.env[carrier] === undefined) this.env[carrier] = value;
      if (this.env[carrier] === value) return carrier;
    }
  }
}
