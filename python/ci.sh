#!/usr/bin/env bash
# The Python package's tests: a venv with maturin, pytest, pyarrow, pandas and CPU torch,
# the extension built in the dev profile into the workspace's target dir (the deps are
# already compiled there by `cargo test`), then pytest over python/tests.
#   python/ci.sh            (from anywhere; VENV=... to choose the venv folder)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="${VENV:-$root/target/python-venv}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"

if [ ! -x "$venv/bin/python" ]; then
  # A torch already installed beside the system's python is reused (it is large).
  if python3 -c 'import torch' 2>/dev/null; then
    python3 -m venv --system-site-packages "$venv"
  else
    python3 -m venv "$venv"
  fi
fi
py="$venv/bin/python"
"$py" -m pip install -q maturin pytest pyarrow pandas duckdb polars "dask[distributed]"
# Torch for the capture tests: the CPU build from PyTorch's index, else PyPI's (the CUDA
# build, several GB, which runs on CPU too). The capture tests need it: no torch, no pass.
cpu_index=https://download.pytorch.org/whl/cpu
if ! "$py" -c 'import torch' 2>/dev/null; then
  if curl -fsS -m 5 -o /dev/null "$cpu_index/torch/" 2>/dev/null; then
    "$py" -m pip install -q torch --index-url "$cpu_index"
  else
    "$py" -m pip install -q torch
  fi
fi

# `maturin develop` installs into the active venv: activate it for this script only.
# shellcheck disable=SC1091
. "$venv/bin/activate"
(cd "$here" && maturin develop -q)

# The binary the tests compare with: the one `cargo test` built, else build it.
bin="$CARGO_TARGET_DIR/debug/kinetoscope"
[ -x "$bin" ] || cargo build -q -p kinetoscope
export KINETOSCOPE_BIN="$bin"
cd "$here"
python -m pytest -q tests
