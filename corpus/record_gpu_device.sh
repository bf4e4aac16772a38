#!/usr/bin/env bash
# One device session: record every GPU scenario of record_gpu.py into bundles under $1
# (the device tool's $OUT), and say whether Nsight Systems is installed there.
set -u
out=${1:?usage: record_gpu_device.sh OUT_DIR [DEADLINE_S]}
deadline=${2:-330}
mkdir -p "$out"
{ nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)';
  echo "nsys: $(command -v nsys || echo none)"; } 2>&1 | tee "$out/device.txt"
PYTHONUNBUFFERED=1 python3 corpus/record_gpu.py /tmp/rec \
  transformer oom run_folder cuda_graph compile_default compile_reduce_overhead corpus \
  --deadline-s "$deadline" --archive-dir "$out"
ls -la "$out"
