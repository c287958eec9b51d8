// The variable that lets ranks share a GPU (a nixl config's benchmark.ranks_may_share_gpu, carried
// by the job's environment). Alone in its file so that the job builder, which only names it, does
// not load the CUDA and NVML bindings (koffi) that gpu-placement.ts needs: every listing pays that.
export const SHARE_GPU_ENV = 'XFER_RANKS_MAY_SHARE_GPU';
