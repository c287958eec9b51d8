// Options a command takes out of its words before its own reader (readArgs) sees the rest: the
// launcher's (--ranks, the EP tests' node flags) and the ucx backend's, which every bench command
// shares and which must not reach the ranks' own command lines. `--name value` and `--name=value`
// both; the rest keeps its order. The caller checks the values (and says what it expected).

export interface TakenOption {
  /** As written, dashes included (`--ranks`): a command may take several spellings of one option. */
  name: string;
  /** undefined when the option was the last word. */
  value: string | undefined;
}

export function takeOptions(argv: readonly string[], names: readonly string[]): { taken: TakenOption[]; rest: string[] } {
  const taken: TakenOption[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split(/=(.*)/s, 2);
    if (!names.includes(name)) rest.push(argv[i]);
    else taken.push({ name, value: inline ?? argv[++i] });
  }
  return { taken, rest };
}
