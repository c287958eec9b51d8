// `--json` of the listing commands: one JSON document on stdout (the same facts as the text,
// each a field), so a script reads it without parsing columns. Notices and warnings stay on stderr.

/** Prints `value` as one JSON document, two-space indented, newline-terminated. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
