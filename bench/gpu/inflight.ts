// GPU check of requests in flight, bundled by bundle.sh and run by run.sh's
// `inflight` part: on one GPU (one rank, to itself) with the cuda backend, a 1 GiB copy is
// posted, then a 4 KiB one; the small one must complete first (it runs on another stream), as
// the engine records it, in each of 3 trials. (256 MiB took ~0.2 ms on an H100, within one
// completion poll of the small copy: both could be seen done in the same poll.) Prints one JSON
// line per trial and `inflight cuda: PASS|FAIL`.
// Command line: USAGE below (--help prints it).
import { XferEngine } from '../../runners/xfer/engine.ts';
import { rankFromEnv } from '../../runners/xfer/rank.ts';
import { openStore } from '../../runners/xfer/store.ts';
import { benchOptions } from '../lib/options.ts';

const USAGE = `usage: node inflight.mjs   (bundled by bench/gpu/bundle.sh; no options)
  On one GPU, a 4 KiB copy posted after a 1 GiB one must complete first, in each of 3 trials.`;

benchOptions({ options: {} }, USAGE);

const BIG = 1 << 30;
const TRIALS = 3;
const info = rankFromEnv({ XFER_JOB_ID: `gpu-inflight-${process.pid}` });
const store = await openStore(info);
const engine = await XferEngine.create({ backend: 'cuda', rank: info, store });
engine.allocate('src', BIG + 4096, 'gpu');
engine.allocate('dst', BIG + 4096, 'gpu');
await engine.connect();
const write = (offset: number, length: number) => ({ op: 'WRITE' as const, peer: 0, local: 'src', localOffset: offset, remote: 'dst', remoteOffset: offset, length });
const big = await engine.prepare([write(0, BIG)]);
const small = await engine.prepare([write(BIG, 4096)]);
await engine.execute(big); // warm-up
let ok = true;
for (let trial = 1; trial <= TRIALS; trial++) {
  const a = engine.post(big);
  const b = engine.post(small);
  await Promise.all([a.done, b.done]);
  const record = engine.inFlightRecord();
  ok &&= b.doneSeq! < a.doneSeq! && b.inFlightAtPost === 2;
  console.log(JSON.stringify({ trial, big: { postSeq: a.postSeq, doneSeq: a.doneSeq }, small: { postSeq: b.postSeq, doneSeq: b.doneSeq, inFlightAtPost: b.inFlightAtPost }, record }));
}
console.log(`inflight cuda: ${ok ? 'PASS' : 'FAIL'}`);
await engine.destroy();
await store.close();
process.exit(ok ? 0 : 1);
