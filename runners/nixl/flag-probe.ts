// Tools whose flags changed between versions (the NIXL EP tests: --use-tcp-store /
// --skip-nic-discovery became --use-etcd / --discover-nics with the defaults flipped): the job asks
// the installed tool's --help which names it knows, then passes the words that mean what the
// config asked for in that version. A tool that knows neither name fails the task with one sentence.
import { spawn } from 'node:child_process';
import { EnvironmentError } from '../common/errors.ts';

/** One setting, spelled per version: `newer` / `older` are the flags whose presence in --help identifies it. */
export interface FlagChoice {
  /** What the config asked for, for the error message (e.g. 'the TCP store for metadata'). */
  meaning: string;
  newer: string;
  older: string;
  /** Words for the tool whose --help shows `newer`, and for the one that shows `older`. */
  newerWords: string[];
  olderWords: string[];
}

export interface FlagProbe {
  /** The tool's help command (the tool's command line up to the script, plus --help). */
  help: string[];
  choices: FlagChoice[];
}

/** Whether `flag` appears in argparse help output as an option of its own. */
export function helpHas(help: string, flag: string): boolean {
  return new RegExp(`(^|[\\s,\\[])${flag.replace(/[-]/g, '\\-')}(?=[\\s,=\\]]|$)`, 'm').test(help);
}

/** The words of every choice for the tool whose help is `help`; throws when it knows neither spelling of a needed one. */
export function pickFlagWords(help: string, choices: FlagChoice[], tool: string): string[] {
  return choices.flatMap((c) => {
    if (helpHas(help, c.newer)) return c.newerWords;
    if (helpHas(help, c.older)) return c.olderWords;
    if (c.newerWords.length === 0 && c.olderWords.length === 0) return [];
    throw new EnvironmentError(`${tool}: its --help names neither ${c.newer} nor ${c.older}, so ${c.meaning} cannot be asked for (is it the NIXL EP test?)`);
  });
}

/** Runs the help command; its stdout and stderr together (argparse prints help to stdout). */
export function runHelp(command: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (out += c));
    child.once('error', (err) => reject(new EnvironmentError(`${command.join(' ')}: ${err.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new EnvironmentError(`${command.join(' ')} ended with ${signal ?? `exit code ${code}`}: ${out.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
