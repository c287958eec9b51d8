// Reads CSV back (RFC 4180: quoted cells, doubled quotes, newlines inside quotes). The framework
// needs it to find a test's own rows when a replay or a resumed run writes them again (csv.ts);
// tests use it to check cells as a spreadsheet would see them. Each record keeps its raw text, so
// a file can be rewritten with every other record byte for byte as it was.

export interface CsvRecord {
  cells: string[];
  /** The record as it is in the file, its line end included (none for a last line without one). */
  text: string;
}

export function splitCsvRecords(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else if (c === '\n') {
      cells.push(cell.replace(/\r$/, ''));
      records.push({ cells, text: text.slice(start, i + 1) });
      cells = [];
      cell = '';
      start = i + 1;
    } else cell += c;
  }
  if (start < text.length) {
    cells.push(cell);
    records.push({ cells, text: text.slice(start) });
  }
  return records;
}

/** Rows as objects keyed by the header's names. */
export function readCsv(text: string): Array<Record<string, string>> {
  const [header, ...body] = splitCsvRecords(text).map((r) => r.cells);
  if (!header) return [];
  return body.map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i] ?? ''])));
}
