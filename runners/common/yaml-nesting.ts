// How deep a YAML text nests its flow collections (`[`, `{`) and its one-line sequences
// (`- - - x`), found in one pass over the characters before the YAML library sees the text. The
// library needs time and memory far beyond linear for deep nesting (a 1 MiB line of `[` took 12
// CPU seconds and 1 GB before it gave up), so a text nested past the bound is refused here, in
// microseconds, at the bracket that passes it. Quoted scalars, comments and block scalars (`|`,
// `>`) are skipped: brackets there are text. Nesting by indentation is left to the library: it
// costs the file's size quadratically, so the size bound keeps it cheap.

export interface NestingProblem {
  line: number;
  col: number;
  /** Past the count of collections (`most`), not the depth: each nesting legal, too many of them. */
  tooMany?: boolean;
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';
const isBreak = (c: string | undefined) => c === '\n' || c === '\r';

/**
 * The first place where lists and mappings nest more than `max` deep, or where the text opens its
 * `most`+1-th flow collection or one-line sequence (each level costs the YAML library kilobytes:
 * a file of many legal 99-deep nestings took 337 MB), or undefined.
 */
export function tooDeepAt(text: string, max: number, most = Number.POSITIVE_INFINITY): NestingProblem | undefined {
  let opened = 0;
  let line = 1;
  let lineStart = 0;
  let flow = 0;
  let dashes = 0;
  /** Where a token may start: a quote there opens a quoted scalar, a bracket a flow collection. */
  let tokenStart = true;
  /** Indentation of the line that opened a block scalar; its deeper lines are text. */
  let blockScalarOf = -1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (isBreak(c)) {
      if (c === '\r' && text[i + 1] === '\n') i++;
      line++;
      lineStart = i + 1;
      dashes = 0;
      tokenStart = true;
      // Indentation of the new line; inside a block scalar, skip the lines indented past its key.
      let j = lineStart;
      while (j < n && text[j] === ' ') j++;
      if (blockScalarOf >= 0) {
        if (j - lineStart > blockScalarOf || j >= n || isBreak(text[j])) {
          const end = text.slice(j).search(/[\r\n]/);
          i = end < 0 ? n : j + end - 1;
          continue;
        }
        blockScalarOf = -1;
      }
      // A one-line sequence: each `- ` opens one more level.
      while (text[j] === '-' && isBlank(text[j + 1])) {
        dashes++;
        if (flow + dashes + 1 > max) return { line, col: j - lineStart + 1 };
        // The line's first dash is an item of a list opened before; each further one opens a list.
        if (dashes > 1 && ++opened > most) return { line, col: j - lineStart + 1, tooMany: true };
        j += 2;
        while (isBlank(text[j])) j++;
      }
      i = j - 1;
      continue;
    }
    if (isBlank(c)) {
      tokenStart = true;
      continue;
    }
    if (c === '#' && (tokenStart || i === lineStart)) {
      while (i + 1 < n && !isBreak(text[i + 1])) i++;
      continue;
    }
    if (tokenStart && (c === '"' || c === "'")) {
      for (i++; i < n; i++) {
        if (c === '"' && text[i] === '\\') i++;
        else if (text[i] === c) {
          if (c === "'" && text[i + 1] === "'") i++;
          else break;
        } else if (text[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
      }
      tokenStart = false;
      continue;
    }
    if (tokenStart && flow === 0 && (c === '|' || c === '>')) {
      let j = lineStart;
      while (text[j] === ' ') j++;
      blockScalarOf = j - lineStart;
      tokenStart = false;
      continue;
    }
    if ((c === '[' || c === '{') && (tokenStart || flow > 0)) {
      flow++;
      if (flow + dashes + 1 > max) return { line, col: i - lineStart + 1 };
      if (++opened > most) return { line, col: i - lineStart + 1, tooMany: true };
      tokenStart = true;
      continue;
    }
    if ((c === ']' || c === '}') && flow > 0) {
      flow--;
      tokenStart = false;
      continue;
    }
    // After `,` (flow) or `: ` a new token may start; anything else is inside a token.
    tokenStart = (c === ',' && flow > 0) || ((c === ':' || c === '?') && (isBlank(text[i + 1]) || isBreak(text[i + 1]) || i + 1 >= n || flow > 0));
  }
  return undefined;
}
