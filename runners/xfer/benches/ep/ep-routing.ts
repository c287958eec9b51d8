// MoE routing for the EP bench and the buffer layout it implies, the same on every rank (all
// derive it from the seed, so no rank needs another's routing over the network).
//
// Each rank owns `tokens` tokens; each token picks `topk` distinct experts of ranks x
// experts_per_rank, expert e living on rank floor(e / experts_per_rank). One (token, expert) pair
// is one message, self included. Dispatch: the token's payload goes to the expert's rank; combine:
// the expert's rank sends the processed message back into the source's slot for that pair.
//
// A source's pairs in "packed" order are sorted by expert (so by destination rank, then local
// expert, then token). A receiver's slots hold, source after source, each source's packed run
// for it. Layout `packed`: the source's send (dispatch) and receive (combine) buffers are in packed
// order too, so each (source, destination) exchange is ONE contiguous transfer, as a dispatch
// kernel's per-destination staging gives. Layout `per-message`: the send buffer holds each token
// once and the combine buffer is in (token, k) order, so every pair is its own transfer.
import { seededRandom } from '../../../common/random.ts';
import type { XferRequest } from '../../backends/types.ts';
import { coalesceRequests } from '../common/coalesce.ts';
import { UsageError } from '../../../common/errors.ts';

export interface EpShape {
  ranks: number;
  tokens: number;
  hidden: number;
  expertsPerRank: number;
  topk: number;
  seed: number;
}

export const epLayouts = ['packed', 'per-message'] as const;
export type EpLayoutKind = (typeof epLayouts)[number];

/** fp8 payload + one fp32 scale per 128 values + 16 bytes of metadata (the reference's count). */
export const dispatchMessageBytes = (hidden: number): number => hidden + (hidden / 128) * 4 + 16;
/** bf16 payload. */
export const combineMessageBytes = (hidden: number): number => hidden * 2;

export const EP_REGIONS = {
  dispatchSend: 'ep-dispatch-send',
  dispatchRecv: 'ep-dispatch-recv',
  combineSend: 'ep-combine-send',
  combineRecv: 'ep-combine-recv',
  flags: 'ep-flags',
  flagSource: 'ep-flag-source',
} as const;

/** Each token's experts, [t * topk + k] = expert: distinct per token, reproducible from (seed, rank). */
export function routeTokens(shape: EpShape, rank: number): Int32Array {
  const experts = shape.ranks * shape.expertsPerRank;
  if (shape.topk > experts) throw new UsageError(`--topk ${shape.topk} exceeds the ${experts} experts (${shape.ranks} ranks x ${shape.expertsPerRank})`);
  const next = seededRandom(Math.imul(shape.seed + 1, 0x9e3779b1) ^ Math.imul(rank + 1, 0x85ebca6b));
  const route = new Int32Array(shape.tokens * shape.topk);
  for (let t = 0; t < shape.tokens; t++) {
    for (let k = 0; k < shape.topk; k++) {
      let e: number;
      do e = Math.floor(next() * experts);
      while (route.subarray(t * shape.topk, t * shape.topk + k).includes(e));
      route[t * shape.topk + k] = e;
    }
  }
  return route;
}

/** One received message of a rank: which source rank's which pair (t * topk + k). */
export interface EpSlot {
  source: number;
  pair: number;
}

export interface EpLayout {
  shape: EpShape;
  kind: EpLayoutKind;
  /** Per rank: its tokens' experts. */
  routes: Int32Array[];
  /** Per rank: position of each of its pairs in its packed order. */
  packedIndex: Int32Array[];
  /** Per rank: the messages it receives at dispatch, in buffer order. */
  slots: EpSlot[][];
  /** Per source rank, per pair: the slot index at the expert's rank. */
  slotOf: Int32Array[];
}

export function epLayout(shape: EpShape, kind: EpLayoutKind = 'packed'): EpLayout {
  const routes = Array.from({ length: shape.ranks }, (_, r) => routeTokens(shape, r));
  const packed = routes.map((route) => Array.from(route.keys()).sort((a, b) => route[a] - route[b] || a - b));
  const packedIndex = packed.map((order) => {
    const index = new Int32Array(order.length);
    order.forEach((pair, i) => (index[pair] = i));
    return index;
  });
  const slots: EpSlot[][] = Array.from({ length: shape.ranks }, () => []);
  packed.forEach((order, source) => order.forEach((pair) => slots[expertRank(shape, routes[source][pair])].push({ source, pair })));
  const slotOf = routes.map((route) => new Int32Array(route.length));
  slots.forEach((list) => list.forEach((s, index) => (slotOf[s.source][s.pair] = index)));
  return { shape, kind, routes, packedIndex, slots, slotOf };
}

/** Where a source keeps pair p: its packed position, or (per-message) the token's payload / the pair's slot. */
export function sourceDispatchIndex(layout: EpLayout, source: number, pair: number): number {
  return layout.kind === 'packed' ? layout.packedIndex[source][pair] : Math.floor(pair / layout.shape.topk);
}

export function sourceCombineIndex(layout: EpLayout, source: number, pair: number): number {
  return layout.kind === 'packed' ? layout.packedIndex[source][pair] : pair;
}

export const expertRank = (shape: EpShape, expert: number): number => Math.floor(expert / shape.expertsPerRank);

/** Dispatch: every (token, expert) payload of `me` to the expert's rank, contiguous runs merged. */
export function dispatchRequests(layout: EpLayout, me: number): XferRequest[] {
  const { shape } = layout;
  const msg = dispatchMessageBytes(shape.hidden);
  const pairs = Array.from(layout.routes[me].keys()).sort((a, b) => layout.packedIndex[me][a] - layout.packedIndex[me][b]);
  return coalesceRequests(
    pairs.map((pair) => ({
      op: 'WRITE' as const,
      peer: expertRank(shape, layout.routes[me][pair]),
      local: EP_REGIONS.dispatchSend,
      localOffset: sourceDispatchIndex(layout, me, pair) * msg,
      remote: EP_REGIONS.dispatchRecv,
      remoteOffset: layout.slotOf[me][pair] * msg,
      length: msg,
    })),
  );
}

/** Combine: every message `me` received at dispatch goes back, processed, to its source's slot. */
export function combineRequests(layout: EpLayout, me: number): XferRequest[] {
  const msg = combineMessageBytes(layout.shape.hidden);
  return coalesceRequests(
    layout.slots[me].map((s, index) => ({
      op: 'WRITE' as const,
      peer: s.source,
      local: EP_REGIONS.combineSend,
      localOffset: index * msg,
      remote: EP_REGIONS.combineRecv,
      remoteOffset: sourceCombineIndex(layout, s.source, s.pair) * msg,
      length: msg,
    })),
  );
}

/** Phase flags: 8 bytes from `me` to every rank (self included), written after the phase's data. */
export function flagRequests(ranks: number, me: number, phase: 0 | 1): XferRequest[] {
  return Array.from({ length: ranks }, (_, peer) => ({
    op: 'WRITE' as const,
    peer,
    local: EP_REGIONS.flagSource,
    localOffset: phase * 8,
    remote: EP_REGIONS.flags,
    remoteOffset: (phase * ranks + me) * 8,
    length: 8,
  }));
}

/** Region sizes of one rank for the data plane (at least 1 byte each). */
export function epRegionBytes(layout: EpLayout, me: number): Record<keyof typeof EP_REGIONS, number> {
  const { tokens, topk, hidden, ranks } = layout.shape;
  const received = layout.slots[me].length;
  return {
    dispatchSend: Math.max(1, (layout.kind === 'packed' ? tokens * topk : tokens) * dispatchMessageBytes(hidden)),
    dispatchRecv: Math.max(1, received * dispatchMessageBytes(hidden)),
    combineSend: Math.max(1, received * combineMessageBytes(hidden)),
    combineRecv: Math.max(1, tokens * topk * combineMessageBytes(hidden)),
    flags: 2 * ranks * 8,
    flagSource: 16,
  };
}
