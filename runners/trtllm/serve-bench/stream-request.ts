// One streaming request to an OpenAI-compatible endpoint, timed on the client's monotonic clock.
// node:http (not fetch): its Agent is the keep-alive pool sized to the concurrency, and its plain
// byte stream costs less per chunk than web streams at hundreds of concurrent streams.
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { failRequest, failureFromError, type RequestFailure } from './failure.ts';
import type { ApiKind } from './options.ts';
import type { BenchPrompt } from './prompts.ts';
import { MalformedStreamError, SseLineReader, type SseData } from './sse-lines.ts';

export interface RequestTarget {
  url: URL;
  api: ApiKind;
  model: string;
  ignoreEos: boolean;
  timeoutMs: number;
  agent: http.Agent;
}

export interface RequestTiming {
  /** Start to the first token chunk, ms. */
  ttftMs: number;
  /** Start to the last token chunk, ms (benchmark_serving's "latency"). */
  e2elMs: number;
  /** Gaps between consecutive token chunks, ms. */
  itlsMs: number[];
  /** Chunks that carried output: the output token count when the server reports no usage. */
  tokenChunks: number;
  /** From the server's `usage`, when it sent one. */
  promptTokens?: number;
  completionTokens?: number;
  /** The KV hand-over a disaggregated server reported with the usage (kv_transfer: bytes, transfer_ms, handover_ms). */
  kvHandover?: { bytes: number; transferMs: number; handoverMs: number };
}

export type RequestOutcome = ({ ok: true } & RequestTiming) | { ok: false; failure: RequestFailure };

const errorBodyLimit = 2048;

function requestBody(target: RequestTarget, prompt: BenchPrompt): string {
  const common = {
    model: target.model,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
    ...(target.ignoreEos ? { ignore_eos: true } : {}),
  };
  return JSON.stringify(
    target.api === 'chat'
      ? { ...common, messages: [{ role: 'user', content: prompt.text }], max_completion_tokens: prompt.outputLen }
      : { ...common, prompt: prompt.tokenIds ?? prompt.text, max_tokens: prompt.outputLen },
  );
}

interface Choice {
  text?: unknown;
  delta?: { content?: unknown; role?: unknown };
  finish_reason?: unknown;
}

/** Output carried by a chunk's first choice, or undefined when the chunk carries none. */
function chunkText(json: { choices?: Choice[] }, api: ApiKind): string | undefined {
  const choice = Array.isArray(json.choices) ? json.choices[0] : undefined;
  if (!choice) return undefined;
  const text = api === 'chat' ? choice.delta?.content : choice.text;
  if (typeof text !== 'string') return undefined;
  // An empty text is a token (e.g. a special one) unless it only announces the role or the finish.
  if (text === '' && (choice.finish_reason || choice.delta?.role)) return undefined;
  return text;
}

function usageNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Sends one request and resolves with its timing or its failure; never rejects. */
export function streamCompletion(target: RequestTarget, prompt: BenchPrompt): Promise<RequestOutcome> {
  return new Promise((resolve) => {
    const where = target.url.href;
    const body = requestBody(target, prompt);
    const timing: RequestTiming = { ttftMs: 0, e2elMs: 0, itlsMs: [], tokenChunks: 0 };
    let sawDone = false;
    let settled = false;
    const start = performance.now();
    let last = start;

    const send = target.url.protocol === 'https:' ? https.request : http.request;
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      accept: 'text/event-stream',
    };
    if (process.env.OPENAI_API_KEY) headers.authorization = `Bearer ${process.env.OPENAI_API_KEY}`;
    const req = send(target.url, { method: 'POST', agent: target.agent, headers });

    const settle = (outcome: RequestOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const fail = (error: unknown): void => {
      if (settled) return;
      settle({ ok: false, failure: failureFromError(error, where) });
      // A half-read stream must not go back to the pool; destroying is a no-op once closed.
      req.destroy();
    };
    const timer = setTimeout(
      () => fail(failRequest('timeout', `${where}: no complete response within ${target.timeoutMs / 1000} s`)),
      target.timeoutMs,
    );

    const onData = (data: SseData): void => {
      if (data.done) {
        sawDone = true;
        return;
      }
      const json = data.json as { choices?: Choice[]; usage?: Record<string, unknown>; error?: unknown; kv_transfer?: Record<string, unknown> };
      if (json === null || typeof json !== 'object') throw new MalformedStreamError(`data is not an object: ${JSON.stringify(json)}`);
      if (json.error !== undefined) {
        throw failRequest('server error event', `${where}: ${JSON.stringify(json.error).slice(0, 300)}`);
      }
      if (chunkText(json, target.api) !== undefined) {
        const now = performance.now();
        if (timing.tokenChunks === 0) timing.ttftMs = now - start;
        else timing.itlsMs.push(now - last);
        last = now;
        timing.tokenChunks++;
      }
      if (json.usage && typeof json.usage === 'object') {
        timing.promptTokens = usageNumber(json.usage.prompt_tokens) ?? timing.promptTokens;
        timing.completionTokens = usageNumber(json.usage.completion_tokens) ?? timing.completionTokens;
      }
      const kv = json.kv_transfer;
      if (kv && typeof kv === 'object' && [kv.bytes, kv.transfer_ms, kv.handover_ms].every((v) => usageNumber(v) !== undefined)) {
        timing.kvHandover = { bytes: kv.bytes as number, transferMs: kv.transfer_ms as number, handoverMs: kv.handover_ms as number };
      }
    };

    const finishStream = (): void => {
      if (timing.tokenChunks === 0) {
        throw failRequest('no tokens', `${where}: the stream ended without a single token chunk`);
      }
      if (!sawDone) throw failRequest('no [DONE]', `${where}: the stream ended without "data: [DONE]"`);
      timing.e2elMs = last - start;
      settle({ ok: true, ...timing });
    };

    const guarded = (step: () => void): void => {
      try {
        step();
      } catch (error) {
        fail(error instanceof MalformedStreamError ? failRequest('malformed chunk', `${where}: ${error.message}`) : error);
      }
    };

    req.on('error', fail);
    req.on('response', (res) => {
      res.on('error', fail);
      res.on('close', () => {
        if (!res.complete) fail(failRequest('connection closed mid-stream', `${where}: the server closed the connection before the response ended`));
      });
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (chunk: string) => {
          if (text.length < errorBodyLimit) text += chunk;
        });
        res.on('end', () => {
          const detail = text.trim().slice(0, errorBodyLimit).replace(/\s+/g, ' ');
          fail(failRequest(`HTTP ${res.statusCode}`, `${where}: HTTP ${res.statusCode} ${res.statusMessage ?? ''}${detail ? `: ${detail}` : ''}`));
        });
        return;
      }
      const reader = new SseLineReader(onData);
      res.on('data', (chunk: string) => guarded(() => reader.push(chunk)));
      res.on('end', () => guarded(() => {
        reader.end();
        finishStream();
      }));
    });
    req.end(body);
  });
}
