import { describe, expect, it } from 'vitest';
import { maxOf } from '../../../runners/common/stats.ts';
import { expandEpAbbreviations, parseEpArgs } from '../../../runners/xfer/benches/ep/ep-options.ts';
import {
  combineMessageBytes,
  combineRequests,
  dispatchMessageBytes,
  dispatchRequests,
  epLayout,
  epRegionBytes,
  routeTokens,
  type EpShape,
} from '../../../runners/xfer/benches/ep/ep-routing.ts';
import { combineRecvExpected, combineSendBytes, complement, dispatchRecvExpected, dispatchSendBytes } from '../../../runners/xfer/benches/ep/ep-payload.ts';
import { bytesPerIteration, crossGpuBytes } from '../../../runners/xfer/benches/ep/ep-data-plane.ts';
import { controlPlaneBufferBytes, operationsToRun } from '../../../runners/xfer/benches/ep/ep-control-plane.ts';
import { controlPlaneTable, crossGpuLines, dataPlaneResult, kernelProfileLine } from '../../../runners/xfer/benches/ep/ep-format.ts';
import type { XferRequest } from '../../../runners/xfer/backends/types.ts';

const shape: EpShape = { ranks: 4, tokens: 64, hidden: 256, expertsPerRank: 3, topk: 3, seed: 7 };

/** Moves bytes between in-memory buffers as the engine would, to check plans end to end. */
function simulate(requestsOf: (rank: number) => XferRequest[], local: (rank: number) => Buffer, remote: (rank: number) => Buffer): void {
  for (let me = 0; me < shape.ranks; me++) {
    for (const r of requestsOf(me)) local(me).copy(remote(r.peer), r.remoteOffset, r.localOffset, r.localOffset + r.length);
  }
}

describe('EP routing and layout', () => {
  it('routes each token to topk distinct experts, reproducibly from the seed', () => {
    const route = routeTokens(shape, 2);
    for (let t = 0; t < shape.tokens; t++) expect(new Set(route.subarray(t * 3, t * 3 + 3)).size).toBe(3);
    expect(maxOf(route)).toBeLessThan(12);
    expect(routeTokens(shape, 2)).toEqual(route);
    expect(routeTokens({ ...shape, seed: 8 }, 2)).not.toEqual(route);
    expect(routeTokens(shape, 3)).not.toEqual(route);
    expect(() => routeTokens({ ...shape, topk: 13 }, 0)).toThrow(/--topk 13 exceeds the 12 experts/);
  });

  it('counts bytes per (token, selected expert), self included, as the reference does', () => {
    expect(dispatchMessageBytes(7168)).toBe(7168 + 56 * 4 + 16);
    expect(combineMessageBytes(7168)).toBe(14336);
    const layout = epLayout(shape);
    expect(bytesPerIteration(layout, 'dispatch')).toBe(64 * 3 * dispatchMessageBytes(256));
    expect(bytesPerIteration(layout, 'combine')).toBe(64 * 3 * combineMessageBytes(256));
    expect(bytesPerIteration(layout, 'e2e')).toBe(64 * 3 * (dispatchMessageBytes(256) + combineMessageBytes(256)));
    // every (token, expert) message is received exactly once, somewhere
    expect(layout.slots.reduce((a, s) => a + s.length, 0)).toBe(4 * 64 * 3);
  });

  it('counts the bytes that cross between GPUs: what each rank sends to and receives from the others, as the plans move them', () => {
    const layout = epLayout(shape);
    for (const mode of ['dispatch', 'combine', 'e2e'] as const) {
      // from the plans themselves: bytes of requests to other ranks, and of other ranks' requests to me
      const plans = (r: number) => [...(mode !== 'combine' ? dispatchRequests(layout, r) : []), ...(mode !== 'dispatch' ? combineRequests(layout, r) : [])];
      for (let me = 0; me < 4; me++) {
        const sent = plans(me).filter((q) => q.peer !== me).reduce((a, q) => a + q.length, 0);
        const received = [0, 1, 2, 3].filter((r) => r !== me).reduce((a, r) => a + plans(r).filter((q) => q.peer === me).reduce((b, q) => b + q.length, 0), 0);
        expect(crossGpuBytes(layout, mode, me), `${mode}, rank ${me}`).toEqual({ sent, received });
        expect(sent).toBeGreaterThan(0);
        expect(sent).toBeLessThan(bytesPerIteration(layout, mode)); // the test's formula counts the messages a rank keeps too
      }
    }
    // one rank: nothing crosses
    expect(crossGpuBytes(epLayout({ ...shape, ranks: 1, expertsPerRank: 12 }), 'e2e', 0)).toEqual({ sent: 0, received: 0 });
  });

  it('poisons with every byte flipped, whatever the length', () => {
    for (const n of [0, 1, 7, 8, 1001]) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff));
      const poisoned = complement(bytes);
      expect(poisoned.length).toBe(n);
      poisoned.forEach((b, i) => expect(b, `byte ${i} of ${n}`).toBe(~bytes[i] & 0xff));
    }
  });

  for (const kind of ['packed', 'per-message'] as const) {
    it(`${kind}: dispatch puts every payload in its expert's slot, combine brings every message back to its (token, k)`, () => {
      const layout = epLayout(shape, kind);
      const sizes = Array.from({ length: 4 }, (_, r) => epRegionBytes(layout, r));
      const recv = sizes.map((s) => Buffer.alloc(s.dispatchRecv));
      simulate((r) => dispatchRequests(layout, r), (r) => dispatchSendBytes(layout, r), (r) => recv[r]);
      recv.forEach((buf, r) => expect(buf.equals(dispatchRecvExpected(layout, r)), `rank ${r}`).toBe(true));
      const back = sizes.map((s) => Buffer.alloc(s.combineRecv));
      simulate((r) => combineRequests(layout, r), (r) => combineSendBytes(layout, r), (r) => back[r]);
      back.forEach((buf, r) => expect(buf.equals(combineRecvExpected(layout, r)), `rank ${r}`).toBe(true));
    });
  }

  it('packed: one transfer per (source, destination) each way; per-message: one per (token, expert)', () => {
    const packed = epLayout(shape, 'packed');
    const perMessage = epLayout(shape, 'per-message');
    for (let r = 0; r < 4; r++) {
      expect(dispatchRequests(packed, r).length).toBeLessThanOrEqual(4);
      expect(new Set(dispatchRequests(packed, r).map((q) => q.peer)).size).toBe(dispatchRequests(packed, r).length);
      expect(combineRequests(packed, r).length).toBeLessThanOrEqual(4);
      expect(dispatchRequests(perMessage, r).length).toBeGreaterThan(64);
    }
  });
});

describe('EP options and output', () => {
  it('has the seed defaults; the data plane runs unless only the control plane is asked for', () => {
    expect(parseEpArgs([])).toMatchObject({ modes: ['e2e'], controlPlane: false, tokens: 512, hidden: 4096, expertsPerRank: [8], cpExpertsPerRank: [8, 32], topk: 2, warmup: 10, iters: 100, layout: 'packed' });
    expect(parseEpArgs(['--experts-per-rank', '4'])).toMatchObject({ expertsPerRank: [4], cpExpertsPerRank: [4] });
    expect(parseEpArgs(['--control-plane', '--experts-per-rank=8,32'])).toMatchObject({ modes: [], controlPlane: true, cpExpertsPerRank: [8, 32] });
    expect(parseEpArgs(['--test=connect'])).toMatchObject({ modes: [], controlPlane: true, test: 'connect' });
    expect(parseEpArgs(['--mode', 'dispatch,combine', '--control-plane']).modes).toEqual(['dispatch', 'combine']);
    expect(parseEpArgs(['--nvlink-backend', 'ipc']).backend).toBe('cuda');
    expect(parseEpArgs(['--use-tcp-store', '--skip-nic-discovery']).backend).toBe('shm');
    expect(() => parseEpArgs(['--hidden', '1000'])).toThrow(/multiple of 128/);
    expect(() => parseEpArgs(['--iters', '1'])).toThrow(/first sample is dropped/);
  });

  it('GPU-initiated on cuda by default (as NIXL EP), the host-posted emulation elsewhere or on request', () => {
    expect(parseEpArgs(['--backend', 'cuda']).initiatedBy).toBe('gpu');
    expect(parseEpArgs(['--nvlink-backend', 'ipc']).initiatedBy).toBe('gpu');
    expect(parseEpArgs(['--backend', 'cuda', '--initiated-by', 'host']).initiatedBy).toBe('host');
    expect(parseEpArgs(['--backend', 'ucx']).initiatedBy).toBe('host');
    expect(() => parseEpArgs(['--backend', 'nccl', '--initiated-by', 'gpu'])).toThrow(
      "--initiated-by gpu needs --backend cuda (kernels write into peers' GPU memory through CUDA IPC); nccl is host-posted only",
    );
    expect(() => parseEpArgs(['--initiated-by', 'cpu'])).toThrow("--initiated-by must be one of gpu, host, got 'cpu'");
  });

  it('prints the seed lines exactly', () => {
    expect(dataPlaneResult('e2e', 8, 8, { avg: 42.884, min: 42.861, max: 42.8899 }, { avg: 519.34, min: 519.1, max: 519.5 }).split('\n').slice(2)).toEqual([
      'Data Plane (e2e): 8/8 ranks passed',
      '='.repeat(70),
      'Bandwidth (GB/s): avg=42.88, min=42.86, max=42.89',
      'Latency (μs):     avg=519.3, min=519.1, max=519.5',
    ]);
    const table = controlPlaneTable(8, 8, [
      { operation: 'init', ms: { avg: 150.23, min: 148.15, max: 152.31 } },
      { operation: 'connect', ms: { avg: 245.67, min: 242.33, max: 248.91 } },
    ]).split('\n');
    expect(table[1]).toBe('Control Plane: 8 experts/rank x 8 ranks = 64 total');
    expect(table[3]).toBe('Operation       Avg (ms)     Min (ms)     Max (ms)');
    expect(table[5]).toBe('init            150.23       148.15       152.31');
    expect(table[8]).toBe('TOTAL           395.90');
  });

  it("adds, after the seed's lines, the cross-GPU bytes and rate and (GPU-initiated) the kernel's own split, in lines the seed's parser skips", () => {
    expect(crossGpuLines({ avg: 121e6, min: 120.5e6, max: 121.5e6 }, { avg: 299.104, min: 297.4, max: 300.8 }).split('\n')).toEqual([
      'Cross-GPU bytes per rank per iteration (received from other GPUs): avg=121000000, min=120500000, max=121500000',
      'Cross-GPU rate (GB/s): avg=299.10, min=297.40, max=300.80',
    ]);
    expect(crossGpuLines({ avg: 10, min: 10, max: 10 }, { avg: 1, min: 1, max: 1 }, 'rank').split('\n')[1]).toBe('Cross-rank rate (GB/s): avg=1.00, min=1.00, max=1.00');
    expect(kernelProfileLine('dispatch', { avg: 380, min: 379, max: 381 }, { avg: 20, min: 18, max: 22.04 })).toBe(
      'Kernel dispatch (μs per run): data avg=380.0, min=379.0, max=381.0; flag wait avg=20.0, min=18.0, max=22.0',
    );
  });

  it('control plane: buffers grow with the experts, --test runs what the operation needs', () => {
    const o = { tokens: 128, hidden: 2048, topk: 2 };
    expect(controlPlaneBufferBytes(o, 4, 32)['ep-cp-dispatch-recv']).toBe(4 * controlPlaneBufferBytes(o, 4, 8)['ep-cp-dispatch-recv']);
    expect(operationsToRun()).toEqual(['init', 'connect', 'disconnect', 'reconnect', 'destroy']);
    expect(operationsToRun('reconnect')).toEqual(['init', 'connect', 'disconnect', 'reconnect', 'destroy']);
    expect(operationsToRun('init')).toEqual(['init', 'destroy']);
  });
});

describe("the EP tests' argparse choices", () => {
  it('refuses what argparse refuses, with its message, whether or not --backend decides the backend', () => {
    const message = "argument --nvlink-backend: invalid choice: 'bogus' (choose from 'nixl', 'ipc', 'none')";
    expect(() => parseEpArgs(['--nvlink-backend', 'bogus'])).toThrow(message);
    expect(() => parseEpArgs(['--backend', 'shm', '--nvlink-backend', 'bogus'])).toThrow(message);
    expect(() => parseEpArgs(['--nvlink-backend', 'IPC'])).toThrow(/invalid choice: 'IPC'/); // argparse is case-sensitive
    expect(() => parseEpArgs(['--mode', 'E2E'])).toThrow("argument --mode: invalid choice: 'E2E' (choose from 'dispatch', 'combine', 'e2e')");
    expect(() => parseEpArgs(['--test', 'Connect'])).toThrow(/argument --test: invalid choice: 'Connect'/);
    expect(parseEpArgs(['--nvlink-backend', 'none']).backend).toBe('ucx');
    expect(parseEpArgs(['--nvlink-backend', 'ipc', '--backend', 'shm']).backend).toBe('shm');
  });
});

describe("the EP tests' argparse: choices and allow_abbrev (test_control_plane.py, test_data_plane.py)", () => {
  it("--test takes the control-plane test's choices only: reconnect runs in the cycle, --test reconnect is refused in argparse's words", () => {
    expect(() => parseEpArgs(['--test', 'reconnect'])).toThrow("argument --test: invalid choice: 'reconnect' (choose from 'init', 'connect', 'disconnect', 'destroy', 'cycle')");
    expect(parseEpArgs(['--test', 'cycle'])).toMatchObject({ controlPlane: true, test: undefined });
    expect(operationsToRun(parseEpArgs(['--test', 'cycle']).test)).toContain('reconnect');
  });

  it('takes a prefix of an option that no other option shares, = or not, as argparse does; the exact name wins', () => {
    expect(expandEpAbbreviations(['--rou', '3', '--nvlink', 'ipc', '--exp=8,32', '--war', '1'])).toEqual(['--rounds', '3', '--nvlink-backend', 'ipc', '--experts-per-rank=8,32', '--warmup', '1']);
    expect(parseEpArgs(expandEpAbbreviations(['--control-plane', '--rou', '3', '--nvlink', 'ipc']))).toMatchObject({ rounds: 3, backend: 'cuda' });
    // the launcher's and node flags too; --rank is exact (not --ranks), --ran is the tests' --rank
    expect(expandEpAbbreviations(['--num-p', '4', '--rank', '1', '--ran', '0', '--master-a', 'h'])).toEqual(['--num-processes', '4', '--rank', '1', '--rank', '0', '--master-addr', 'h']);
    // --te: the test's --test, though this command's test hooks share the prefix
    expect(expandEpAbbreviations(['--te', 'connect'])).toEqual(['--test', 'connect']);
    // values and words after -- are left alone; an unknown word is left for the reader to refuse
    expect(expandEpAbbreviations(['--mode', 'e2e', '--', '--rou'])).toEqual(['--mode', 'e2e', '--', '--rou']);
    expect(expandEpAbbreviations(['--bogus'])).toEqual(['--bogus']);
  });

  it("decides a prefix by the option table of the test the command line runs, as that test's argparse does", () => {
    // The data-plane test: --num-processes is its only --nu..., --use-etcd its only --u...
    expect(expandEpAbbreviations(['--nu', '4'])).toEqual(['--num-processes', '4']);
    expect(expandEpAbbreviations(['--num', '4'])).toEqual(['--num-processes', '4']);
    expect(expandEpAbbreviations(['--u'])).toEqual(['--use-etcd']);
    expect(expandEpAbbreviations(['--use'])).toEqual(['--use-etcd']);
    expect(() => expandEpAbbreviations(['--m', '10.0.0.1'])).toThrow(/^ambiguous option: --m could match --mode, .*--master-addr/);
    // The control-plane test: --master-addr is its only --m...; --num-processes and --num-tokens share --nu, as there.
    expect(expandEpAbbreviations(['--control-plane', '--m', '10.0.0.1', '--use'])).toEqual(['--control-plane', '--master-addr', '10.0.0.1', '--use-etcd']);
    expect(expandEpAbbreviations(['--test', 'connect', '--m=10.0.0.1'])).toEqual(['--test', 'connect', '--master-addr=10.0.0.1']);
    expect(() => expandEpAbbreviations(['--control-plane', '--nu', '4'])).toThrow(/^ambiguous option: --nu could match --num-tokens, --num-processes/);
    // --use is --use-etcd there, which the engine refuses in one sentence
    expect(() => parseEpArgs(expandEpAbbreviations(['--control-plane', '--use']))).toThrow(/^--use-etcd: the engine's ranks exchange their metadata through its own TCP store/);
  });

  it("refuses a prefix several options share, naming them, in argparse's words", () => {
    expect(() => expandEpAbbreviations(['--to', '5'])).toThrow('ambiguous option: --to could match --tokens, --topk');
    expect(() => expandEpAbbreviations(['--t=5'])).toThrow(/^ambiguous option: --t could match --test, --tokens, --topk, --timeout/);
  });
});
