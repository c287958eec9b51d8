// The UCX configuration the engine's context starts from: NIXL's defaults (what its UCX backend
// sets) and the engine's own, each applied only where neither the environment (UCX_<name>) nor
// the caller's overrides set it. A user's own value always wins; where it replaces one of the
// engine's defaults, that is reported so a run's log says which value moved the bytes.

/**
 * UCX configuration NIXL's UCX backend sets (src/plugins/ucx/ucx_utils.cpp) unless the
 * environment sets UCX_<name>. The RDMA ones only where the host has an RDMA device: elsewhere no
 * UCX component reads them and UCX warns "invalid configurations" at every worker.
 */
export const NIXL_UCX_DEFAULTS: Readonly<Record<string, string>> = { RNDV_THRESH: 'inf' };
export const NIXL_UCX_RDMA_DEFAULTS: Readonly<Record<string, string>> = {
  MAX_RMA_RAILS: '2',
  IB_PCI_RELAXED_ORDERING: 'try',
  RC_FENCE: 'none',
};

/**
 * The engine's own. UCP 1.13 selects no RMA lane on tcp (`ucx_info -e -u r`:
 * "rma_bw: mds" empty; tcp's md registers no memory), so ucp_put_nbx over tcp is emulated with
 * active messages, one TX_SEG_SIZE fragment at a time, each copied into a send buffer and out of
 * a receive buffer of RX_SEG_SIZE. At UCX's 8 KiB fragments a 64 MiB WRITE between two network
 * namespaces ran at 0.89 GB/s, at 1 MiB 2.80 GB/s (iperf3 on the same veth link: 2.01 GB/s; same
 * run, bench/netns-link.ts, runners/xfer/README.md). Only the tcp transport reads these; its
 * buffers come from pools grown 8 at a time, on first use.
 */
export const ENGINE_UCX_DEFAULTS: Readonly<Record<string, string>> = {
  TCP_TX_SEG_SIZE: '1m',
  TCP_RX_SEG_SIZE: '1m',
};

export interface UcxDefaultsPlan {
  /** UCP defaults to apply with ucp_config_modify, in order. */
  apply: [name: string, value: string][];
  /**
   * Transport defaults to put in the process's environment (UCX_<name>) before UCX reads its
   * configuration: UCX reads a transport's settings from the environment when each interface
   * opens, and in UCX 1.13 a ucp_config_modify of TCP_TX_SEG_SIZE did not reach tcp (the engine
   * moved 64 MiB at the 8 KiB fragments' rate, 0.78-0.99 GB/s, against 2.7-2.8 GB/s with the same
   * value in the environment, alternating runs). A caller's override of one of these goes there too.
   */
  environment: [name: string, value: string][];
  /** The engine's defaults the environment replaced: "UCX_<name>=<user's value> (engine default <value>)". */
  userReplaced: string[];
}

/** Which defaults to apply, given the environment and the caller's overrides (names without UCX_). */
export function planUcxDefaults(env: NodeJS.ProcessEnv, overrides: Record<string, string>, rdma: boolean): UcxDefaultsPlan {
  const plan: UcxDefaultsPlan = { apply: [], environment: [], userReplaced: [] };
  const defaults = { ...NIXL_UCX_DEFAULTS, ...(rdma ? NIXL_UCX_RDMA_DEFAULTS : {}), ...ENGINE_UCX_DEFAULTS };
  for (const [name, value] of Object.entries(defaults)) {
    const engines = name in ENGINE_UCX_DEFAULTS;
    const own = env[`UCX_${name}`] ?? overrides[name];
    if (own === undefined) (engines ? plan.environment : plan.apply).push([name, value]);
    else if (engines && own !== value) plan.userReplaced.push(`UCX_${name}=${own} (engine default ${value})`);
    // the environment wins over an override, as UCX reads it; an override alone must reach the transport too
    if (engines && env[`UCX_${name}`] === undefined && overrides[name] !== undefined) plan.environment.push([name, overrides[name]]);
  }
  return plan;
}
