// How the ucx backend meets each peer: the error-handling mode of its endpoint, which decides the
// transports UCX may use, and who allocates the registered host memory. The choices, their
// defaults (the environment, then the engine's), and the check that names a bad value.
//
// NIXL's UCX backend (src/plugins/ucx) gives every endpoint the backend parameter
// `ucx_error_handling_mode` (default 'peer') and registers memory the application allocated. With
// UCX 1.13 'peer' leaves only transports that detect a failed peer: tcp between processes of one
// host, where `ucx_perftest` (no error handling, UCX-allocated memory) copies through shared memory.
import { XferError } from '../errors.ts';
import type { UcpErrorMode } from '../native/ucp.ts';

export const ucxErrorHandlings = ['auto', 'peer', 'none'] as const;
/** 'auto': 'none' towards a peer on this node (shared memory / CMA), 'peer' towards other nodes (network). */
export type UcxErrorHandling = (typeof ucxErrorHandlings)[number];

export const ucxMemories = ['ucx', 'registered'] as const;
/**
 * 'ucx': UCX allocates host regions (ucp_mem_map ALLOCATE, as ucx_perftest), so a same-host peer
 * writes straight into them through a shared-memory mapping. 'registered': the engine allocates
 * them and UCX registers them (as NIXL does); one host then reaches them through CMA.
 */
export type UcxMemory = (typeof ucxMemories)[number];

export const ucxPosts = ['memh', 'plain', 'nixl'] as const;
/**
 * What each put/get is posted with. 'memh': the local region's memory handle. 'plain': no request
 * parameters; UCX then finds the local buffer's memory type and registration on every call, which
 * with a UCX built with CUDA measured slow (2.2-3.3x the 4 KiB latency of 'memh' at batch 16, on a
 * GPU machine's UCX 1.22); with UCX 1.13 without CUDA no different. 'nixl': the memory
 * handle and UCP_OP_ATTR_FLAG_MULTI_SEND, as NIXL's UCX backend posts them (UCX 1.22 then left the
 * engine's gets and puts open longer: slower than 'memh' here).
 */
export type UcxPost = (typeof ucxPosts)[number];

export const ucxCompletions = ['each', 'flush'] as const;
/**
 * How execute() learns that a plan is done. 'each': every put/get UCX did not finish inside its
 * post is polled, and each request gets its own done time. 'flush': such a put/get is freed at once
 * (UCX completes it internally) and only the endpoint's flush is polled, as NIXL's UCX backend
 * does; an operation's done time is then its flush's.
 */
export type UcxCompletion = (typeof ucxCompletions)[number];

export interface UcxOptions {
  /** UCX_TLS for this context (e.g. 'tcp'); default: the environment's, else UCX's choice. */
  tls?: string;
  /** UCX_NET_DEVICES (e.g. 'lo'). */
  netDevices?: string;
  /** Any other UCX configuration, names without the UCX_ prefix. */
  config?: Record<string, string>;
  /** Default: XFER_UCX_ERROR_HANDLING, else 'auto'. */
  errorHandling?: UcxErrorHandling;
  /** Default: XFER_UCX_MEMORY, else 'ucx'. */
  memory?: UcxMemory;
  /** Default: XFER_UCX_POST, else 'memh'. */
  post?: UcxPost;
  /** Default: XFER_UCX_COMPLETION, else 'each'. */
  completion?: UcxCompletion;
  /** A thread of its own progresses the worker (NIXL's progress thread, nixlbench --enable_pt). */
  progressThread?: boolean;
}

/** The environment variables that carry the choices to every rank (flags and configs set them). */
export const UCX_CHOICE_ENV = {
  errorHandling: 'XFER_UCX_ERROR_HANDLING',
  memory: 'XFER_UCX_MEMORY',
  post: 'XFER_UCX_POST',
  completion: 'XFER_UCX_COMPLETION',
} as const;
/** The ucx flags a bench command was given (benches/common/ucx-flags.ts), for the refusal below. */
export const UCX_FLAGS_ENV = 'XFER_UCX_FLAGS';

/** An engine on another backend refuses ucx flags rather than ignore them. */
export function refuseUcxFlags(backend: string, env: NodeJS.ProcessEnv = process.env): void {
  const flags = env[UCX_FLAGS_ENV];
  if (backend !== 'ucx' && flags) throw new XferError(`${flags}: applies to the ucx backend only, and this run uses ${backend}`);
}

export function checkUcxChoice<T extends string>(what: string, value: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === value.toLowerCase());
  if (!found) throw new XferError(`${what} must be one of ${choices.join(', ')}, got '${value}'`);
  return found;
}

/** Options with every choice decided: given, else from the environment, else the default. */
export function resolveUcxChoices(
  options: UcxOptions,
  env: NodeJS.ProcessEnv = process.env,
): { errorHandling: UcxErrorHandling; memory: UcxMemory; post: UcxPost; completion: UcxCompletion } {
  const fromEnv = <T extends string>(name: string, choices: readonly T[]): T | undefined =>
    env[name] === undefined ? undefined : checkUcxChoice(`${name} (environment)`, env[name]!, choices);
  return {
    errorHandling: options.errorHandling ?? fromEnv(UCX_CHOICE_ENV.errorHandling, ucxErrorHandlings) ?? 'auto',
    memory: options.memory ?? fromEnv(UCX_CHOICE_ENV.memory, ucxMemories) ?? 'ucx',
    post: options.post ?? fromEnv(UCX_CHOICE_ENV.post, ucxPosts) ?? 'memh',
    completion: options.completion ?? fromEnv(UCX_CHOICE_ENV.completion, ucxCompletions) ?? 'each',
  };
}

/** The error-handling mode of the endpoint towards a peer. */
export function endpointErrorMode(choice: UcxErrorHandling, sameNode: boolean): UcpErrorMode {
  if (choice === 'auto') return sameNode ? 'none' : 'peer';
  return choice;
}
