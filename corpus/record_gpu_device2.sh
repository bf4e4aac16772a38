#!/usr/bin/env bash
# The second device session of 2026-11-27: DDP over NCCL on one rank, and the transformer
# and OOM scenarios again with the expandable-segments allocator, into bundles under $1.
set -u
out=${1:?usage: record_gpu_device2.sh OUT_DIR}
mkdir -p "$out/expandable"
PYTHONUNBUFFERED=1 python3 corpus/record_gpu.py /tmp/rec ddp_nccl --archive-dir "$out" --deadline-s 200
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True PYTHONUNBUFFERED=1 \
  python3 corpus/record_gpu.py /tmp/rec-exp transformer oom --archive-dir "$out/expandable" --deadline-s 200
ls -laR "$out"
