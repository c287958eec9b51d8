// The OpenAI-compatible request and response shapes the servers and the router speak: a request's
// prompt, limits and stream options read (and what this engine cannot honour refused in one
// sentence), and the chunks of a streamed answer for /v1/completions and /v1/chat/completions.
import { encodeText } from './byte-vocab.ts';
import { DisaggBenchError } from '../common/errors.ts';

export type Api = 'completions' | 'chat';

/** What the router and the servers carry between the phases of one request (TensorRT-LLM's disaggregated_params). */
export interface DisaggregatedParams {
  request_type: 'context_only' | 'generation_only';
  /** generation_only: the first token the context server generated. */
  first_token?: number;
  prompt_tokens?: number;
  /** generation_only: where the context server's state waits: its rank, place and length in its region, and a checksum. */
  kv?: { rank: number; offset: number; length: number; checksum: string };
}

export interface ParsedRequest {
  api: Api;
  model: string;
  prompt: number[];
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
  ignoreEos: boolean;
  /** vLLM's return_token_ids: the generated ids in the answer's choice (token_ids). */
  returnTokenIds: boolean;
  disaggregated?: DisaggregatedParams;
}

export class BadRequest extends DisaggBenchError {
  override name = 'BadRequest';
}

const MAX_TOKENS_DEFAULT = 16;

/** Messages as one prompt: `role: content` lines, as a template-less chat model sees them. */
function chatPrompt(messages: unknown): number[] {
  if (!Array.isArray(messages) || messages.length === 0) throw new BadRequest('messages must be a non-empty array');
  const lines = messages.map((m, i) => {
    const content = (m as { content?: unknown })?.content;
    if (typeof content !== 'string') throw new BadRequest(`messages[${i}].content must be a string`);
    return `${(m as { role?: unknown }).role ?? 'user'}: ${content}`;
  });
  return encodeText(`${lines.join('\n')}\nassistant:`);
}

function completionPrompt(prompt: unknown): number[] {
  if (typeof prompt === 'string') return encodeText(prompt);
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return encodeText(prompt[0]);
  if (Array.isArray(prompt) && prompt.every((t) => Number.isInteger(t))) return prompt as number[];
  throw new BadRequest('prompt must be a string or an array of token ids (one prompt per request)');
}

export function parseRequest(api: Api, body: Record<string, unknown>): ParsedRequest {
  const temperature = body.temperature;
  if (temperature !== undefined && temperature !== null && temperature !== 0) {
    throw new BadRequest(`temperature ${JSON.stringify(temperature)}: this engine samples greedily only (temperature 0)`);
  }
  if (body.n !== undefined && body.n !== 1) throw new BadRequest('n: this engine returns one choice per request');
  if (body.stop !== undefined && body.stop !== null && !(Array.isArray(body.stop) && body.stop.length === 0)) {
    throw new BadRequest('stop: stop sequences are not supported by this engine');
  }
  const limit = api === 'chat' ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens;
  const maxTokens = limit === undefined || limit === null ? MAX_TOKENS_DEFAULT : limit;
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1) throw new BadRequest(`max_tokens must be a whole number of at least 1, not ${JSON.stringify(limit)}`);
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  return {
    api,
    model: typeof body.model === 'string' ? body.model : '',
    prompt: api === 'chat' ? chatPrompt(body.messages) : completionPrompt(body.prompt),
    maxTokens: maxTokens as number,
    stream: body.stream === true,
    includeUsage: options?.include_usage === true,
    ignoreEos: body.ignore_eos === true,
    returnTokenIds: body.return_token_ids === true,
    ...(body.disaggregated_params ? { disaggregated: body.disaggregated_params as DisaggregatedParams } : {}),
  };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The chunk (streaming) or body (not) pieces of one answer. */
export function chunk(api: Api, id: string, model: string, text: string, finish: string | null, first: boolean): object {
  const created = Math.floor(Date.now() / 1000);
  if (api === 'chat') {
    const delta = first ? { role: 'assistant', content: text } : finish && text === '' ? {} : { content: text };
    return { id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] };
  }
  return { id, object: 'text_completion', created, model, choices: [{ index: 0, text, logprobs: null, finish_reason: finish }] };
}

export function fullAnswer(api: Api, id: string, model: string, text: string, finish: string, usage: Usage, extra: object, tokenIds?: number[]): object {
  const created = Math.floor(Date.now() / 1000);
  const ids = tokenIds ? { token_ids: tokenIds } : {};
  const choice = api === 'chat' ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: finish, ...ids } : { index: 0, text, logprobs: null, finish_reason: finish, ...ids };
  return { id, object: api === 'chat' ? 'chat.completion' : 'text_completion', created, model, choices: [choice], usage, ...extra };
}

export function usageChunk(api: Api, id: string, model: string, usage: Usage, extra: object): object {
  return { id, object: api === 'chat' ? 'chat.completion.chunk' : 'text_completion', created: Math.floor(Date.now() / 1000), model, choices: [], usage, ...extra };
}

export function sse(data: object | string): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}
