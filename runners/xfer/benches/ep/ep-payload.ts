// What the EP buffers hold: each token's dispatch payload is a pattern of (source rank, token),
// each combined message one of (source rank, pair), so a message that lands in the wrong slot,
// comes from the wrong token or never arrives is caught, with the slot it concerns.
import { patternBytes } from '../../pattern.ts';
import { combineMessageBytes, dispatchMessageBytes, sourceCombineIndex, sourceDispatchIndex, type EpLayout } from './ep-routing.ts';

// Stream "receivers" that keep dispatch and combine patterns apart.
const DISPATCH_TAG = 0x7d00;
const COMBINE_TAG = 0x7c00;

function concat(count: number, size: number, piece: (i: number) => Uint8Array): Buffer {
  const out = Buffer.alloc(Math.max(1, count * size));
  for (let i = 0; i < count; i++) out.set(piece(i), i * size);
  return out;
}

/** The dispatch send buffer of `me`: each token's payload, once per expert (packed) or once. */
export function dispatchSendBytes(layout: EpLayout, me: number): Buffer {
  const msg = dispatchMessageBytes(layout.shape.hidden);
  const { tokens, topk } = layout.shape;
  const count = layout.kind === 'packed' ? tokens * topk : tokens;
  const tokenAt = new Int32Array(count);
  for (let pair = 0; pair < tokens * topk; pair++) tokenAt[sourceDispatchIndex(layout, me, pair)] = Math.floor(pair / topk);
  return concat(count, msg, (i) => patternBytes({ sender: me, receiver: DISPATCH_TAG, iteration: tokenAt[i] }, 0, msg));
}

/** What `me`'s dispatch receive buffer must hold afterwards. */
export function dispatchRecvExpected(layout: EpLayout, me: number): Buffer {
  const msg = dispatchMessageBytes(layout.shape.hidden);
  const slots = layout.slots[me];
  return concat(slots.length, msg, (i) =>
    patternBytes({ sender: slots[i].source, receiver: DISPATCH_TAG, iteration: Math.floor(slots[i].pair / layout.shape.topk) }, 0, msg),
  );
}

/** The combine send buffer of `me`: the processed message of each slot it received. */
export function combineSendBytes(layout: EpLayout, me: number): Buffer {
  const msg = combineMessageBytes(layout.shape.hidden);
  const slots = layout.slots[me];
  return concat(slots.length, msg, (i) => patternBytes({ sender: slots[i].source, receiver: COMBINE_TAG, iteration: slots[i].pair }, 0, msg));
}

/** What `me`'s combine receive buffer must hold: one message per (token, k), where the layout puts it. */
export function combineRecvExpected(layout: EpLayout, me: number): Buffer {
  const msg = combineMessageBytes(layout.shape.hidden);
  const count = layout.shape.tokens * layout.shape.topk;
  const pairAt = new Int32Array(count);
  for (let pair = 0; pair < count; pair++) pairAt[sourceCombineIndex(layout, me, pair)] = pair;
  return concat(count, msg, (i) => patternBytes({ sender: me, receiver: COMBINE_TAG, iteration: pairAt[i] }, 0, msg));
}

/** Every byte flipped: what a receive buffer is poisoned with before a verified run. */
export function complement(bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(bytes.length);
  out.set(bytes);
  // Four bytes at a time (buffers of DeepEP's normal shape are ~0.5 GB), then the tail.
  const words = Math.floor(out.length / 4);
  const view = new Int32Array(out.buffer, out.byteOffset, words);
  for (let i = 0; i < words; i++) view[i] = ~view[i];
  for (let i = words * 4; i < out.length; i++) out[i] = ~out[i];
  return out;
}

export interface MessageMismatch {
  message: number;
  byte: number;
  expected: number;
  got: number;
}

/** The first differing byte, located as (message index, byte in it); undefined when equal. */
export function firstMessageMismatch(expected: Uint8Array, got: Uint8Array, messageBytes: number): MessageMismatch | undefined {
  if (Buffer.compare(expected, got) === 0) return undefined;
  let i = 0;
  while (i < expected.length && expected[i] === got[i]) i++;
  return { message: Math.floor(i / messageBytes), byte: i % messageBytes, expected: expected[i], got: got[i] };
}
