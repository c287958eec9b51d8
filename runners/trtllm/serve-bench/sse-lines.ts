// Server-sent events as the OpenAI streaming APIs send them: `data: <json>` lines, blank lines
// between events, `data: [DONE]` at the end. Only `data:` matters; comments and other SSE fields
// are skipped; anything else is a malformed stream.
import { DisaggBenchError } from '../../common/errors.ts';
import type { ErrorCategory } from '../../common/errors.ts';

export type SseData = { done: true } | { done: false; json: unknown };

export class MalformedStreamError extends DisaggBenchError {
  override get category(): ErrorCategory {
    return 'input';
  }
  override name = 'MalformedStreamError';
}

function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

/** Splits decoded text into lines across arbitrary chunk boundaries and parses each data line. */
export class SseLineReader {
  private pending = '';

  constructor(private readonly onData: (data: SseData) => void) {}

  /** Feeds decoded text; throws MalformedStreamError on a line that is not valid SSE/JSON. */
  push(text: string): void {
    const buffer = this.pending + text;
    let start = 0;
    let newline = buffer.indexOf('\n', start);
    while (newline !== -1) {
      this.line(buffer.slice(start, newline));
      start = newline + 1;
      newline = buffer.indexOf('\n', start);
    }
    this.pending = buffer.slice(start);
  }

  /** End of stream: the last line may lack its newline. */
  end(): void {
    const rest = this.pending;
    this.pending = '';
    this.line(rest);
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '' || line.startsWith(':')) return;
    if (!line.startsWith('data:')) {
      if (/^(event|id|retry):/.test(line)) return;
      throw new MalformedStreamError(`not an SSE line: ${preview(line)}`);
    }
    const payload = line.slice(5).trim();
    if (payload === '[DONE]') {
      this.onData({ done: true });
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      throw new MalformedStreamError(`data line is not JSON: ${preview(payload)}`);
    }
    this.onData({ done: false, json });
  }
}
