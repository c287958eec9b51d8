# one-off on the GPU machine: the copy kernel's shape vs the 4-GPU all-to-all (bench/results/gpu/2026-11-27-h200x4-kernel-shapes)
D=.gpu-bundle
[[ -x /tmp/node ]] || { xz -dc $D/node.xz > /tmp/node && chmod +x /tmp/node; }
export PATH=/tmp:$PATH XFER_TIMEOUT_S=120 CUDA_DEVICE_MAX_CONNECTIONS=32
nvidia-smi -L
timeout 120 python3 -m torch.distributed.run --nproc_per_node 4 --master_port 29433 $D/nccl_alltoall.py 64M 256M 2>$OUT/nccl.err > $OUT/nccl.jsonl; echo "nccl rc=$?"; cat $OUT/nccl.jsonl
for k in 512/4/streaming 1024/4/streaming 512/8/streaming 256/8/streaming 1024/8/streaming 512/4/cached 512/2/streaming; do
  n=${k//\//-}
  t0=$SECONDS
  XFER_CUDA_KERNEL=$k timeout 120 node $D/engine-limits.mjs --ranks 4 --sizes 64M --limit-sizes 64M --a2a-sizes 64M,256M --variants kernel --ep '' --out $OUT/k-$n.jsonl > $OUT/k-$n.log 2>&1
  echo "shape $k rc=$? ($((SECONDS - t0)) s)"; grep -h '"a2a"' $OUT/k-$n.jsonl | python3 -c '
import sys,json
for l in sys.stdin:
    r=json.loads(l); print(" ", r.get("variant"), r.get("bytesPerPeer")>>20, "MiB withSelf" if r.get("withSelf") else "MiB", "host", round(r["host"]["medianMs"],4) if "host" in r else r.get("medianMs"), "gated", round(r["gated"]["medianMs"],4) if r.get("gated") else None, "verified", r.get("verified"))'
done
