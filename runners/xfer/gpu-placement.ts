// Which GPU a rank uses, and the refusal when ranks would have to share one without the config
// saying so: two ranks on one GPU make a "GPU to GPU" transfer a copy inside one device (1,087
// GB/s on one H100 reported as VRAM to VRAM between 2 GPUs). A rank takes local rank modulo the
// GPUs it sees; more ranks on the node than GPUs is refused unless XFER_RANKS_MAY_SHARE_GPU=1 (a
// config's benchmark.ranks_may_share_gpu). Each GPU rank records its device (index, name, PCI bus
// id, node) in one line of its log (runners/common/rank-device-line.ts), which the results and the
// report carry.
import { XferError } from './errors.ts';
import { cudart } from './native/cudart.ts';
import { nvml } from './native/nvml.ts';
import type { RankInfo } from './rank.ts';
import type { RankDevice } from '../common/rank-device-line.ts';
import { SHARE_GPU_ENV } from './gpu-share-env.ts';

export { SHARE_GPU_ENV };

/** Whether ranks may share a GPU (the config's ranks_may_share_gpu, carried by the job's environment). */
export function ranksMayShareGpu(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SHARE_GPU_ENV] === '1' || env[SHARE_GPU_ENV] === 'true';
}

/** The device of `rank` among `visible` GPUs: local rank modulo visible; refused when ranks would share one unasked. */
export function placeRank(rank: Pick<RankInfo, 'rank' | 'localRank' | 'localWorldSize' | 'node'>, visible: number, mayShare: boolean, env: NodeJS.ProcessEnv = process.env): number {
  if (visible < 1) throw new XferError(`rank ${rank.rank}: no GPU visible on node ${rank.node}${visibleNote(env)}`);
  if (rank.localWorldSize > visible && !mayShare) {
    throw new XferError(
      `${rank.localWorldSize} ranks on node ${rank.node} but ${visible} GPU(s) visible${visibleNote(env)}: ranks would share a GPU, and a transfer ` +
        `between them would be a copy inside one device; give each rank its own GPU, or allow sharing (benchmark.ranks_may_share_gpu: true, ${SHARE_GPU_ENV}=1)`,
    );
  }
  return rank.localRank % visible;
}

function visibleNote(env: NodeJS.ProcessEnv): string {
  return env.CUDA_VISIBLE_DEVICES !== undefined ? ` (CUDA_VISIBLE_DEVICES=${env.CUDA_VISIBLE_DEVICES})` : '';
}

/** Index, name and bus id of `device` for `rank` (name through NVML by bus id; 'unknown' without NVML). */
export function describeRankDevice(rank: Pick<RankInfo, 'rank' | 'node' | 'localRank' | 'localWorldSize'>, device: number): RankDevice {
  const cuda = cudart();
  const visible = cuda.deviceCount();
  const busId = cuda.pciBusId(device);
  let name = 'unknown (NVML unavailable)';
  try {
    const n = nvml();
    n.init();
    try {
      name = n.deviceNameByBusId(busId);
    } finally {
      n.shutdown();
    }
  } catch {
    // the name is for the record only; CUDA's own bus id still identifies the device
  }
  let sharedBy = 0;
  for (let local = 0; local < rank.localWorldSize; local++) if (local % visible === device) sharedBy++;
  return { rank: rank.rank, node: rank.node, device, name, busId, sharedBy: Math.max(1, sharedBy) };
}
