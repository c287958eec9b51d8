// Why a request failed, in two parts: a short kind that groups failures in the summary
// ("ECONNREFUSED", "HTTP 500", "malformed chunk") and the message of one occurrence.
import { DisaggBenchError } from '../../common/errors.ts';

export interface RequestFailure {
  kind: string;
  message: string;
}

/** Raised inside a request to end it with a given failure (malformed stream, timeout...). */
export class RequestFailedError extends DisaggBenchError {
  override name = 'RequestFailedError';
  constructor(readonly failure: RequestFailure) {
    super(failure.message);
  }
}

export function failRequest(kind: string, message: string): RequestFailedError {
  return new RequestFailedError({ kind, message });
}

/** Maps anything thrown or emitted during a request to a failure; system errors keep their code. */
export function failureFromError(error: unknown, url: string): RequestFailure {
  if (error instanceof RequestFailedError) return error.failure;
  const err = error as NodeJS.ErrnoException | undefined;
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const message = err instanceof Error ? err.message : String(error);
  if (code === 'ECONNRESET' && message === 'aborted') {
    return { kind: 'connection closed mid-stream', message: `${url}: the server closed the connection before the response ended` };
  }
  return { kind: code ?? (err instanceof Error ? err.name : 'error'), message: `${url}: ${message}` };
}

export interface FailureSummaryLine {
  kind: string;
  count: number;
  /** The first occurrence's message. */
  example: string;
}

/** Failures grouped by kind, most frequent first. */
export function summarizeFailures(failures: RequestFailure[]): FailureSummaryLine[] {
  const byKind = new Map<string, FailureSummaryLine>();
  for (const f of failures) {
    const line = byKind.get(f.kind);
    if (line) line.count++;
    else byKind.set(f.kind, { kind: f.kind, count: 1, example: f.message });
  }
  return [...byKind.values()].sort((a, b) => b.count - a.count);
}

/** benchmark_serving prints "Error type: <type>, Count: <n> requests" before its block; so do we, with an example. */
export function formatFailureSummary(lines: FailureSummaryLine[]): string {
  return lines.map((l) => `Error type: ${l.kind}, Count: ${l.count} requests\n  e.g. ${l.example}\n`).join('');
}
