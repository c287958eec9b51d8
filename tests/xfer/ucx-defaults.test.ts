// The UCX configuration the engine starts from: NIXL's defaults and the engine's own (tcp
// fragment sizes), each applied only where the user is silent; a user's value replacing one of the
// engine's is reported.
import { describe, expect, it } from 'vitest';
import { ucp } from '../../runners/xfer/native/ucp.ts';
import { ENGINE_UCX_DEFAULTS, NIXL_UCX_DEFAULTS, NIXL_UCX_RDMA_DEFAULTS, planUcxDefaults } from '../../runners/xfer/native/ucx-defaults.ts';

describe('UCX defaults', () => {
  it("applies NIXL's and the engine's defaults where the environment and the overrides are silent (RDMA ones only with an RDMA device)", () => {
    const plan = planUcxDefaults({}, {}, false);
    // UCP's through ucp_config_modify, the transports' through the environment (tcp reads it when it opens)
    expect(Object.fromEntries(plan.apply)).toEqual(NIXL_UCX_DEFAULTS);
    expect(Object.fromEntries(plan.environment)).toEqual(ENGINE_UCX_DEFAULTS);
    expect(plan.environment).toContainEqual(['TCP_TX_SEG_SIZE', '1m']);
    expect(plan.environment).toContainEqual(['TCP_RX_SEG_SIZE', '1m']);
    expect(plan.userReplaced).toEqual([]);
    expect(Object.fromEntries(planUcxDefaults({}, {}, true).apply)).toEqual({ ...NIXL_UCX_DEFAULTS, ...NIXL_UCX_RDMA_DEFAULTS });
  });

  it("keeps the user's own value (environment or overrides) and names each engine default it replaced", () => {
    const plan = planUcxDefaults({ UCX_TCP_TX_SEG_SIZE: '8k', UCX_RNDV_THRESH: '64k' }, { TCP_RX_SEG_SIZE: '64k' }, false);
    const applied = plan.apply.map(([name]) => name);
    expect(applied).not.toContain('TCP_TX_SEG_SIZE');
    expect(applied).not.toContain('TCP_RX_SEG_SIZE');
    expect(applied).not.toContain('RNDV_THRESH');
    // NIXL's defaults replaced are NIXL's business (as NIXL, silent); the engine's are reported
    expect(plan.userReplaced).toEqual(['UCX_TCP_TX_SEG_SIZE=8k (engine default 1m)', 'UCX_TCP_RX_SEG_SIZE=64k (engine default 1m)']);
    // an override of a transport setting goes into the environment, where tcp reads it
    expect(plan.environment).toEqual([['TCP_RX_SEG_SIZE', '64k']]);
  });

  it('a user value equal to the default is not reported', () => {
    expect(planUcxDefaults({ UCX_TCP_TX_SEG_SIZE: '1m' }, {}, false).userReplaced).toEqual([]);
  });
});

describe('UCX defaults in a real UCX context', () => {
  const names = Object.keys(ENGINE_UCX_DEFAULTS).map((n) => `UCX_${n}`);
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  const restore = () => {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
    }
  };

  it("ucp_init sees the engine's tcp fragments through the environment, and a user's own value is kept and reported", () => {
    const u = ucp();
    try {
      for (const n of names) delete process.env[n];
      const plain = u.init({});
      u.cleanup(plain.context);
      expect(plain.userReplaced).toEqual([]);
      for (const [name, value] of Object.entries(ENGINE_UCX_DEFAULTS)) expect(process.env[`UCX_${name}`]).toBe(value);

      process.env.UCX_TCP_TX_SEG_SIZE = '8k';
      const own = u.init({});
      u.cleanup(own.context);
      expect(process.env.UCX_TCP_TX_SEG_SIZE).toBe('8k');
      expect(own.userReplaced).toEqual(['UCX_TCP_TX_SEG_SIZE=8k (engine default 1m)']);
    } finally {
      restore();
    }
  });
});
