// The command line every rank of an engine kind runs, built from the kind's flag table: one row
// per flag, saying which key of the kind's config section it passes (or how to compute it) and
// how the value is written. Every engine kind's command has the same shape:
//   <command> [positional words] --backend <benchmark.backend> <the rows that are set, in order>
import type { NixlKindContext } from '../kind.ts';
import { nixlConfig } from '../common.ts';
import { sizeBytes } from '../kinds/kind-values.ts';

export type FlagValue = string | number | boolean | readonly (string | number)[] | undefined;

/**
 * How a row's value is written (a row whose value is undefined writes nothing):
 * - 'value' (default): `--flag <value>`
 * - 'size': `--flag <bytes>` of a size written as bytes or with K/M/G
 * - 'list': `--flag a,b,c` of a value or a list of values; an empty list writes nothing
 * - 'repeat': `--flag a --flag b` once per value of a list
 * - 'switch': `--flag` alone when the value is true
 */
export type FlagFormat = 'value' | 'size' | 'list' | 'repeat' | 'switch';

/** Where a row's value comes from: a key of the section, or a function of the section and the test's log folder. */
export type FlagSource<S> = (keyof S & string) | ((section: S, logDir: string) => FlagValue);

export type FlagRow<S> = readonly [flag: string, source: FlagSource<S>, format?: FlagFormat];

export type FlagTable<S> = readonly FlagRow<S>[];

export interface FlagCommand<S> {
  /** The `disagg-bench` subcommand the ranks run. */
  command: string;
  /** Words between the subcommand and `--backend` (e.g. the config file the job writes). */
  positional?: (logDir: string) => string[];
  flags: FlagTable<S>;
}

function words<S>([flag, source, format = 'value']: FlagRow<S>, section: S, logDir: string): string[] {
  const value = typeof source === 'function' ? source(section, logDir) : (section[source] as FlagValue);
  if (value === undefined) return [];
  switch (format) {
    case 'switch':
      return value === true ? [flag] : [];
    case 'size':
      return [flag, String(sizeBytes(value as number | string))];
    case 'list': {
      const list = [value].flat();
      return list.length > 0 ? [flag, list.join(',')] : [];
    }
    case 'repeat':
      return [value].flat().flatMap((v) => [flag, String(v)]);
    case 'value':
      return [flag, String(value)];
  }
}

/** `--backend <backend>` and the words of every row that is set, in the table's order. */
export function flagArgs<S>(flags: FlagTable<S>, section: S, backend: string, logDir = ''): string[] {
  return ['--backend', backend, ...flags.flatMap((row) => words(row, section, logDir))];
}

/** The argv (after `disagg-bench`) of a rank: the subcommand, its positional words, the flags. */
export function rankArgv<S>(command: FlagCommand<S>, section: S, ctx: NixlKindContext): string[] {
  const { backend } = nixlConfig(ctx.config).benchmark;
  return [command.command, ...(command.positional?.(ctx.logDir) ?? []), ...flagArgs(command.flags, section, backend, ctx.logDir)];
}
