// A command line that a command cannot take: one sentence naming the word and what was expected.
// `disagg-bench` prints it after the command's name with a pointer to the command's --help
// (framework/cli.ts); serve-bench prints its usage after it.
import { DisaggBenchError } from '../errors.ts';

export class CommandArgsError extends DisaggBenchError {
  override name = 'CommandArgsError';

  /** `option`: the option at fault without its dashes, where one is. */
  constructor(message: string, readonly option?: string) {
    super(message, { place: option });
  }
}
