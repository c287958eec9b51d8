// The UCX configuration the engine starts from: NIXL's defaults and the engine's own (tcp
// fragment sizes), each applied only where the user is silent; a user's value replacing one of the
// engine's is reported.
import { describe, expect, it } from 'vitest';
import { ENGINE_UCX_DEFAULTS, NIXL_UCX_DEFAULTS, NIXL_UCX_RDMA_DEFAULTS, planUcxDefaults } from '../../runners/xfer/native/ucx-defaults.ts';

describe('UCX defaults', () => {
  it("applies NIXL's and the engine's defaults where the environment and the overrides are silent (RDMA ones only with an RDMA device)", () => {
    const plan = planUcxDefaults({}, {}, false);
    expect(Object.fromEntries(plan.apply)).toEqual({ ...NIXL_UCX_DEFAULTS, ...ENGINE_UCX_DEFAULTS });
    expect(plan.apply).toContainEqual(['TCP_TX_SEG_SIZE', '1m']);
    expect(plan.apply).toContainEqual(['TCP_RX_SEG_SIZE', '1m']);
    expect(plan.userReplaced).toEqual([]);
    expect(Object.fromEntries(planUcxDefaults({}, {}, true).apply)).toEqual({ ...NIXL_UCX_DEFAULTS, ...NIXL_UCX_RDMA_DEFAULTS, ...ENGINE_UCX_DEFAULTS });
  });

  it("keeps the user's own value (environment or overrides) and names each engine default it replaced", () => {
    const plan = planUcxDefaults({ UCX_TCP_TX_SEG_SIZE: '8k', UCX_RNDV_THRESH: '64k' }, { TCP_RX_SEG_SIZE: '64k' }, false);
    const applied = plan.apply.map(([name]) => name);
    expect(applied).not.toContain('TCP_TX_SEG_SIZE');
    expect(applied).not.toContain('TCP_RX_SEG_SIZE');
    expect(applied).not.toContain('RNDV_THRESH');
    // NIXL's defaults replaced are NIXL's business (as NIXL, silent); the engine's are reported
    expect(plan.userReplaced).toEqual(['UCX_TCP_TX_SEG_SIZE=8k (engine default 1m)', 'UCX_TCP_RX_SEG_SIZE=64k (engine default 1m)']);
  });

  it('a user value equal to the default is not reported', () => {
    expect(planUcxDefaults({ UCX_TCP_TX_SEG_SIZE: '1m' }, {}, false).userReplaced).toEqual([]);
  });
});
