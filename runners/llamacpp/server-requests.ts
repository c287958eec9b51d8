// One completion request on a llama-server: read, queued on the serving loop in the server's role,
// answered as a stream of SSE chunks or as one JSON body. A context server answers with the first
// token and where its state waits (disaggregated_params); a generation server first reads that
// state through the transfer engine, checks it against the context server's checksum, loads it.
import type http from 'node:http';
import { monoNs } from '../xfer/index.ts';
import { TextDecoder8 } from './byte-vocab.ts';
import { sendError, readBody, sendJson } from './http-json.ts';
import { checksum, type KvLink } from './kv-link.ts';
import type { LlamaRuntime } from './llama-runtime.ts';
import { BadRequest, chunk, fullAnswer, parseRequest, sse, usageChunk, type Api, type ParsedRequest } from './openai-protocol.ts';
import type { FinishReason, ServeLoop, ServeRequest } from './serve-loop.ts';

export interface ServerState {
  role: 'agg' | 'ctx' | 'gen';
  ready: boolean;
  modelName: string;
  runtime?: LlamaRuntime;
  loop?: ServeLoop;
  link?: KvLink;
  rank?: number;
  /** ctx: hand-over slots free, and requests waiting for one. */
  freeSlots?: number[];
  slotWaiters?: Array<() => void>;
  releaseSlot?: (offset: number) => void;
  handovers: number;
}

let counter = 0;

/** A free hand-over slot of a context server (waits for a release when none is free). */
async function takeSlot(state: ServerState): Promise<number> {
  while (state.freeSlots!.length === 0) await new Promise<void>((resolve) => state.slotWaiters!.push(resolve));
  return state.freeSlots!.pop()!;
}

export async function handleCompletion(state: ServerState, api: Api, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  let request: ParsedRequest;
  try {
    request = parseRequest(api, JSON.parse(await readBody(req)));
    const type = request.disaggregated?.request_type;
    if (state.role === 'ctx' && type !== 'context_only') throw new BadRequest('a context server takes context_only requests: send requests to the router');
    if (state.role === 'gen' && (type !== 'generation_only' || !request.disaggregated?.kv)) throw new BadRequest('a generation server takes generation_only requests with a handed-over state: send requests to the router');
    const tokens = (request.disaggregated?.prompt_tokens ?? request.prompt.length) + request.maxTokens;
    if (tokens > state.runtime!.options.maxSeqLen) throw new BadRequest(`prompt and max_tokens make ${tokens} tokens, more than this server's max_seq_len of ${state.runtime!.options.maxSeqLen}`);
  } catch (err) {
    return sendError(res, 400, err instanceof SyntaxError ? `the body is not JSON: ${err.message}` : (err as Error).message);
  }
  const id = `cmpl-${process.pid}-${++counter}`;
  const decoder = new TextDecoder8();
  const ids: number[] = [];
  let text = '';
  let finished = false;
  let handover: { bytes: number; transfer_ms: number; handover_ms: number } | undefined;
  let context: object | undefined;
  const stream = request.stream && state.role !== 'ctx';
  const promptTokens = request.disaggregated?.prompt_tokens ?? request.prompt.length;
  // llama.cpp's server's timings: the prompt (queue and prefill, or the hand-over) to the first
  // token, and the decode of the rest as this server produced it (its loop, steps and writes).
  const queuedAt = performance.now();
  let firstAt = 0;
  let lastAt = 0;
  const timings = () => {
    const predictedMs = lastAt - firstAt;
    return { prompt_n: promptTokens, prompt_ms: firstAt - queuedAt, predicted_n: Math.max(0, ids.length - 1), predicted_ms: predictedMs, predicted_per_second: predictedMs > 0 ? ((ids.length - 1) * 1000) / predictedMs : 0 };
  };
  const extra = () => ({ timings: timings(), ...(handover ? { kv_transfer: handover } : {}) });

  let slot = -1;
  if (state.role === 'ctx') slot = await takeSlot(state);
  const serve: ServeRequest = {
    prompt: state.role === 'gen' ? new Array(promptTokens).fill(0) : request.prompt,
    maxTokens: request.maxTokens,
    ignoreEos: request.ignoreEos,
    phase: state.role === 'agg' ? 'full' : state.role === 'ctx' ? 'context' : 'generation',
    firstToken: request.disaggregated?.first_token,
    handOver(seq) {
      const link = state.link!;
      const offset = link.slotOffset(slot);
      const length = state.runtime!.exportState(seq, link.region.address + BigInt(offset), link.slotBytes);
      context = { request_type: 'generation_only', prompt_tokens: request.prompt.length, kv: { rank: state.rank, offset, length, checksum: checksum(link.region.read(offset, length)) } };
    },
    async load(seq) {
      const link = state.link!;
      const kv = request.disaggregated!.kv!;
      const t0 = monoNs();
      const transferMs = await link.pull(kv.rank, kv.offset, kv.length, seq);
      const offset = link.slotOffset(seq);
      const got = checksum(link.region.read(offset, kv.length));
      if (got !== kv.checksum) throw new BadRequest(`the KV cache handed over from rank ${kv.rank} arrived corrupted (checksum ${got}, sent ${kv.checksum})`);
      state.runtime!.importState(seq, link.region.address + BigInt(offset), kv.length);
      // transfer: the engine's READ; hand-over: READ, checksum and llama_state_seq_set_data.
      handover = { bytes: kv.length, transfer_ms: transferMs, handover_ms: (monoNs() - t0) / 1e6 };
      state.handovers++;
      console.log(`kv_handover request=${id} bytes=${kv.length} transfer_ms=${transferMs.toFixed(3)} handover_ms=${handover.handover_ms.toFixed(3)}`);
    },
    onToken(token) {
      lastAt = performance.now();
      if (ids.length === 0) firstAt = lastAt;
      ids.push(token);
      const piece = decoder.push(token);
      if (!stream) {
        text += piece;
        return;
      }
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(sse(chunk(api, id, request.model, piece, null, ids.length === 1)));
    },
    onEnd(reason: FinishReason) {
      finished = true;
      const usage = { prompt_tokens: promptTokens, completion_tokens: ids.length, total_tokens: promptTokens + ids.length };
      if (state.role === 'ctx') {
        return sendJson(res, 200, { ...(fullAnswer(api, id, request.model, text + decoder.flush(), reason, usage, {}) as object), disaggregated_params: { ...context, first_token: ids[0] } });
      }
      if (!stream) return sendJson(res, 200, fullAnswer(api, id, request.model, text + decoder.flush(), reason, usage, extra(), request.returnTokenIds ? ids : undefined));
      res.write(sse(chunk(api, id, request.model, decoder.flush(), reason, false)));
      if (request.includeUsage) res.write(sse(usageChunk(api, id, request.model, usage, extra())));
      res.end(sse('[DONE]'));
    },
    onError(err) {
      finished = true;
      if (slot >= 0) state.releaseSlot!(state.link!.slotOffset(slot));
      const message = err instanceof Error ? err.message : String(err);
      console.error(`request ${id} failed: ${message}`);
      if (res.headersSent) res.destroy();
      else sendError(res, err instanceof BadRequest ? 400 : 500, message);
    },
  };
  res.on('close', () => {
    if (!finished) serve.cancelled = true;
  });
  state.loop!.submit(serve);
}
