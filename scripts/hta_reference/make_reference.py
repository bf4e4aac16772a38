#!/usr/bin/env python3
"""Run Holistic Trace Analysis (HTA) over real GPU traces and write compact reference files.

This script is the record of how the HTA reference outputs under
`crates/kinetoscope-analysis/tests/fixtures/hta_reference/` were made. For each trace (or
rank folder) below it loads the trace with HTA's defaults and writes, into
`<out>/<name>/`:

    temporal_breakdown.csv          get_temporal_breakdown(visualize=False)
    temporal_breakdown_asserts_off.csv  only where that call fails on one of HTA's own
                                    sanity asserts: the same call under `python -O`, i.e.
                                    the numbers HTA computed before refusing them
    idle_time_breakdown.csv         get_idle_time_breakdown(ranks=<all>, visualize=False,
    idle_time_interval_stats.csv        show_idle_interval_stats=True)  (default
                                        consecutive_kernel_delay=30 µs); the second frame's
                                        index written as column `idle_category`
    gpu_kernel_type_breakdown.csv   get_gpu_kernel_breakdown(visualize=False,
    gpu_kernel_breakdown_full.csv       include_memory_kernels=True, num_kernels=10**9,
                                        duration_ratio=1.0): the kernel-type table (which
                                        does not depend on folding) and the unfolded
                                        per-kernel table
    comm_comp_overlap.csv           get_comm_comp_overlap(visualize=False)
    cuda_kernel_launch_stats.csv    get_cuda_kernel_launch_stats(ranks=<all>,
                                        visualize=False), frames concatenated with a
                                        leading `rank` column
    meta.json                       versions, input files and their SHA-256, ranks, events
                                    kept per rank after HTA's load filter, profiler steps,
                                    and the error of every call that failed

An analysis that raises is recorded in meta.json (`errors`) and its file is not written;
a trace that HTA cannot load gets a meta.json with the load error only.

Usage (HTA in a throwaway virtual environment; HTA loads are slow, so each trace is
skipped when its meta.json already records the same inputs and HTA version, unless
--force):

    python3 -m venv /tmp/hta-venv
    /tmp/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0 pandas==2.3.3 numpy==2.2.6
    /tmp/hta-venv/bin/python scripts/hta_reference/make_reference.py \\
        --shared /work/shared \\
        --out crates/kinetoscope-analysis/tests/fixtures/hta_reference

`--only NAME` (repeatable) limits the run to some traces; `--list` prints them.

Why pandas 2.3.3: HTA 0.5.0 (the last release named HolisticTraceAnalysis) writes partner
row indices into a column it has already downcast to int8 / int16
(`transform_correlation_to_index`); pandas 2 upcasts with a FutureWarning, pandas 3 raises
TypeError, so with pandas 3.1.1 two of these traces do not load. Every file of the other
traces is byte-identical under pandas 3.1.1 / numpy 2.4.6.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

# name -> (what, path(s) relative to the shared folder). A folder means every trace in it
# (HTA reads every *.json / *.gz directly in the folder, one rank each).
TRACES: dict[str, tuple[str, str]] = {
    "tracelens_b200_eager": (
        "NVIDIA B200, eager, MX GEMMs, MoE, symmetric-memory all-reduce, no ProfilerStep",
        "external/tracelens/b200__eager_trace.json.gz",
    ),
    "tracelens_h100_qwen": (
        "NVIDIA H100, Qwen1.5-0.5B inference, one ProfilerStep",
        "external/tracelens/h100__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    ),
    "tracelens_mi300_qwen": (
        "AMD MI300X (ROCm), the same model",
        "external/tracelens/mi300__Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    ),
    "tracelens_mi300_resnet_act_checkpoint": (
        "AMD MI300X, ResNet with activation checkpointing, 3 ProfilerSteps, RCCL",
        "external/tracelens/mi300__resnet_act_checkpoint.json.gz",
    ),
    "tracelens_mi210_gpu_only": (
        "AMD MI210, GPU activity only",
        "external/tracelens/mi210__gpu_only_trace__gpu_only_trace.json.gz",
    ),
    "tracelens_torch_compile_triton": (
        "AMD MI300X, torch.compile / Triton kernels, no ProfilerStep",
        "external/tracelens/torch_compile_triton__trace.json.gz",
    ),
    "tracelens_vllm_decode_graph": (
        "vLLM decode on ROCm, kernels replayed from one hipGraphLaunch",
        "external/tracelens/inference__vllm_decode_full__graph_execution.json.gz",
    ),
    "tracelens_sglang_decode": (
        "SGLang decode on MI300X, graph launches, a long blocking memcpy",
        "external/tracelens/inference__sglang_decode__sglang_Qwen3-8B_decode.json.gz",
    ),
    "param_dlrm_8rank": (
        "8-rank DLRM, Tesla V100, NCCL all_to_all / all_reduce, one ProfilerStep per rank",
        "external/param/dlrm_kineto",
    ),
    "param_linear_2080ti": (
        "RTX 2080 Ti, no ProfilerStep",
        "external/param/linear_kineto.json.gz",
    ),
    "hta_critical_path_alexnet": (
        "HTA's critical_path/alexnet: Context Sync events on stream 2^32-1",
        "external/hta/critical_path/alexnet",
    ),
}

# `get_temporal_breakdown` in a separate `python -O` process (asserts off): argv = trace
# folder, output CSV.
TEMPORAL_ASSERTS_OFF = """
import logging, sys, warnings
warnings.simplefilter("ignore")
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
TraceAnalysis(trace_dir=sys.argv[1]).get_temporal_breakdown(visualize=False).to_csv(
    sys.argv[2], index=False)
"""

OUTPUTS = [
    "temporal_breakdown.csv",
    "temporal_breakdown_asserts_off.csv",
    "idle_time_breakdown.csv",
    "idle_time_interval_stats.csv",
    "gpu_kernel_type_breakdown.csv",
    "gpu_kernel_breakdown_full.csv",
    "comm_comp_overlap.csv",
    "cuda_kernel_launch_stats.csv",
]


def trace_files(shared: Path, rel: str) -> list[Path]:
    """The trace files of an entry: the file, or every *.json / *.gz in the folder."""
    p = shared / rel
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.name.endswith((".json", ".gz")))
    if not p.is_file():
        raise FileNotFoundError(p)
    return [p]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {"python": platform.python_version()}
    for pkg in ["HolisticTraceAnalysis", "pandas", "numpy"]:
        try:
            out[pkg] = version(pkg)
        except Exception:  # noqa: BLE001 - a missing package is recorded, not fatal
            out[pkg] = "not installed"
    return out


def error_text(e: BaseException) -> str:
    """The exception and the last frame it came from (HTA's file and line)."""
    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


def run_one(name: str, files: list[Path], shared: Path, out: Path) -> dict:
    """Load one trace set with HTA and write its reference files into `out`."""
    import pandas as pd
    from hta.trace_analysis import TraceAnalysis

    meta: dict = {
        "name": name,
        "inputs": [
            {"path": str(f.relative_to(shared)), "sha256": sha256(f)} for f in files
        ],
        "versions": versions(),
        "date": dt.date.today().isoformat(),
        "options": {
            "TraceAnalysis": "trace_dir=<a folder holding only these files>, "
            "include_last_profiler_step=False",
            "consecutive_kernel_delay_us": 30,
            "runtime_cutoff_us": 50,
            "launch_delay_cutoff_us": 100,
            "gpu_kernel_breakdown": "include_memory_kernels=True, num_kernels=10**9, "
            "duration_ratio=1.0",
        },
        "errors": {},
        "seconds": {},
    }
    out.mkdir(parents=True, exist_ok=True)
    for stale in OUTPUTS:
        (out / stale).unlink(missing_ok=True)

    # HTA reads every *.json / *.gz directly in trace_dir: give it a folder of links.
    tmp = Path(tempfile.mkdtemp(prefix=f"hta-{name}-"))
    try:
        for f in files:
            (tmp / f.name).symlink_to(f.resolve())
        t0 = time.perf_counter()
        try:
            analyzer = TraceAnalysis(trace_dir=str(tmp))
        except Exception as e:  # noqa: BLE001 - recorded in meta.json
            meta["errors"]["load"] = error_text(e)
            return meta
        meta["seconds"]["load"] = round(time.perf_counter() - t0, 2)
        ranks = sorted(analyzer.t.get_ranks())
        meta["ranks"] = ranks
        meta["rank_files"] = {
            str(r): Path(analyzer.t.trace_files[r]).name for r in ranks
        }
        meta["events_after_load_per_rank"] = {
            str(r): int(len(analyzer.t.get_trace(r))) for r in ranks
        }
        try:
            meta["profiler_steps"] = [int(s) for s in analyzer.get_profiler_steps()]
        except Exception as e:  # noqa: BLE001
            meta["errors"]["get_profiler_steps"] = error_text(e)

        def call(key: str, fn):
            t = time.perf_counter()
            try:
                result = fn()
            except Exception as e:  # noqa: BLE001 - recorded in meta.json
                meta["errors"][key] = error_text(e)
                return None
            meta["seconds"][key] = round(time.perf_counter() - t, 2)
            return result

        def write(df: pd.DataFrame, file: str) -> None:
            df.to_csv(out / file, index=False)

        df = call("temporal", lambda: analyzer.get_temporal_breakdown(visualize=False))
        if df is not None:
            write(df, "temporal_breakdown.csv")
        elif meta["errors"]["temporal"].startswith("AssertionError"):
            # HTA computed the numbers and then refused them (a sanity assert, e.g.
            # non-compute time < 0 after its rounding made sub-µs rows negative). Record
            # what it computed: the same call with Python's asserts off (`python -O`).
            done = subprocess.run(
                [sys.executable, "-O", "-c", TEMPORAL_ASSERTS_OFF, str(tmp),
                 str(out / "temporal_breakdown_asserts_off.csv")],
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                meta["errors"]["temporal_asserts_off"] = done.stderr.strip().splitlines()[-1]

        res = call(
            "idle",
            lambda: analyzer.get_idle_time_breakdown(
                ranks=ranks, visualize=False, show_idle_interval_stats=True
            ),
        )
        if res is not None:
            idle, stats = res
            write(idle, "idle_time_breakdown.csv")
            stats = stats.reset_index()
            stats = stats.rename(columns={stats.columns[0]: "idle_category"})
            write(stats, "idle_time_interval_stats.csv")

        res = call(
            "kernel_breakdown",
            lambda: analyzer.get_gpu_kernel_breakdown(
                visualize=False,
                include_memory_kernels=True,
                num_kernels=10**9,
                duration_ratio=1.0,
            ),
        )
        if res is not None:
            types, kernels = res
            write(types, "gpu_kernel_type_breakdown.csv")
            write(kernels, "gpu_kernel_breakdown_full.csv")

        df = call("comm_comp_overlap", lambda: analyzer.get_comm_comp_overlap(visualize=False))
        if df is not None:
            write(df, "comm_comp_overlap.csv")

        res = call(
            "launch_stats",
            lambda: analyzer.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False),
        )
        if res is not None:
            frames = []
            for r in ranks:
                f = res[r].copy()
                f.insert(0, "rank", r)
                frames.append(f)
            write(pd.concat(frames, ignore_index=True), "cuda_kernel_launch_stats.csv")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return meta


def cached(out: Path, files: list[Path], shared: Path) -> bool:
    """Whether `out/meta.json` already records these inputs and this HTA version."""
    try:
        meta = json.loads((out / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    want = [{"path": str(f.relative_to(shared)), "sha256": sha256(f)} for f in files]
    have = meta.get("versions", {}).get("HolisticTraceAnalysis")
    return meta.get("inputs") == want and have == versions()["HolisticTraceAnalysis"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, required=True, help="the shared reference folder")
    ap.add_argument("--out", type=Path, required=True, help="where to write <name>/ folders")
    ap.add_argument("--only", action="append", default=[], help="only this trace (repeatable)")
    ap.add_argument("--force", action="store_true", help="rerun traces already done")
    ap.add_argument("--list", action="store_true", help="list the traces and exit")
    args = ap.parse_args()

    if args.list:
        for name, (what, rel) in TRACES.items():
            print(f"{name:40} {rel}\n{'':40} {what}")
        return 0
    try:
        import hta  # noqa: F401 - only to fail early with a hint
    except ImportError:
        print(
            "HTA is not installed in this Python: python3 -m venv /tmp/hta-venv && "
            "/tmp/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0 pandas==2.3.3 "
            "numpy==2.2.6, then run this script with /tmp/hta-venv/bin/python",
            file=sys.stderr,
        )
        return 2
    unknown = [n for n in args.only if n not in TRACES]
    if unknown:
        ap.error(f"unknown trace(s): {', '.join(unknown)} (see --list)")
    os.environ.setdefault("HTA_LOG_LEVEL", "WARNING")
    logging.basicConfig(level=logging.WARNING)
    # pandas 2 announces the dtype upcasts described above on every trace.
    warnings.simplefilter("ignore", FutureWarning)
    if not versions()["pandas"].startswith("2."):
        print(
            f"note: pandas {versions()['pandas']}; the reference files were made with "
            "pandas 2.3.3 (HTA 0.5.0 fails to load some traces with pandas 3)",
            file=sys.stderr,
        )

    shared = args.shared.resolve()
    failed = 0
    for name, (what, rel) in TRACES.items():
        if args.only and name not in args.only:
            continue
        files = trace_files(shared, rel)
        out = args.out / name
        if not args.force and cached(out, files, shared):
            print(f"{name}: up to date", flush=True)
            continue
        print(f"{name}: {len(files)} file(s) ...", flush=True)
        t = time.perf_counter()
        meta = run_one(name, files, shared, out)
        meta["what"] = what
        (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        errs = meta["errors"]
        failed += bool(errs)
        print(
            f"{name}: done in {time.perf_counter() - t:.0f} s"
            + (f"; errors: {errs}" if errs else ""),
            flush=True,
        )
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
