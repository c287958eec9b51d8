// The ucx backend's choices as flags of every bench command: --ucx-error-handling auto|peer|none,
// --ucx-memory ucx|registered, --ucx-post memh|plain|nixl and --ucx-completion each|flush
// (underscores too, in nixlbench's style). They reach every rank
// through the environment, as a config's `ucx:` section does (backends/ucx-options.ts), and name
// themselves there so that an engine on another backend refuses them instead of ignoring them.
import {
  UCX_CHOICE_ENV,
  UCX_FLAGS_ENV,
  checkUcxChoice,
  ucxCompletions,
  ucxErrorHandlings,
  ucxMemories,
  ucxPosts,
} from '../../backends/ucx-options.ts';
import { UsageError } from './options.ts';
import { takeOptions } from '../../../common/args/take-options.ts';

export const ucxFlagsUsage =
  '--ucx-error-handling auto|peer|none  --ucx-memory ucx|registered  --ucx-post memh|plain|nixl  --ucx-completion each|flush\n' +
  '      (ucx backend: transports per peer, how puts and gets are posted and completed; see runners/xfer/README.md;\n' +
  '      also spelled --ucx_error_handling, --ucx_memory, --ucx_post, --ucx_completion)';

const FLAGS = [
  { names: ['--ucx-error-handling', '--ucx_error_handling'], env: UCX_CHOICE_ENV.errorHandling, choices: ucxErrorHandlings },
  { names: ['--ucx-memory', '--ucx_memory'], env: UCX_CHOICE_ENV.memory, choices: ucxMemories },
  { names: ['--ucx-post', '--ucx_post'], env: UCX_CHOICE_ENV.post, choices: ucxPosts },
  { names: ['--ucx-completion', '--ucx_completion'], env: UCX_CHOICE_ENV.completion, choices: ucxCompletions },
] as const;

/** Takes the ucx flags out of argv and puts them in `env` (this process's, which ranks inherit). */
export function takeUcxFlags(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const { taken, rest } = takeOptions(argv, FLAGS.flatMap((f) => f.names));
  const given: string[] = [];
  for (const { name, value: raw } of taken) {
    const flag = FLAGS.find((f) => (f.names as readonly string[]).includes(name))!;
    if (raw === undefined || raw.startsWith('--')) throw new UsageError(`${name} needs a value: one of ${flag.choices.join(', ')}`);
    let value: string;
    try {
      value = checkUcxChoice(name, raw, flag.choices);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    env[flag.env] = value;
    given.push(`${flag.names[0]} ${value}`);
  }
  if (given.length > 0) env[UCX_FLAGS_ENV] = given.join(' ');
  return rest;
}
