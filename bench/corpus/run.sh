#!/usr/bin/env bash
# Runs the benchmark corpus from a folder staged by stage.sh, pinned to two cores
# (taskset -c 0,1), and writes DIR/corpus.json and DIR/corpus.txt. More arguments go to
# kinetoscope-bench (e.g. --size 200MiB --runs 1 --only a100,nccl-gz).
# Environment: WORK_DIR (default /tmp/kinetoscope-corpus), CORES (default 0,1),
# RESULTS (the results' path without .json/.txt; default DIR/corpus).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 DIR [kinetoscope-bench options]" >&2
    exit 2
fi
dir=$(cd "$1" && pwd)
shift
cores=${CORES:-0,1}
results=${RESULTS:-$dir/corpus}
taskset -c "$cores" "$dir/bin/kinetoscope-bench" --corpus \
    --kinetoscope "$dir/bin/kinetoscope" \
    --synth "$dir/bin/kinetoscope-synth" \
    --seeds "$dir/seeds" \
    --work-dir "${WORK_DIR:-/tmp/kinetoscope-corpus}" \
    --json-out "$results.json" \
    "$@" | tee "$results.txt"
