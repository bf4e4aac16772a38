"""kinetoscope from Python against the CLI and against HTA, on one trace, in one run.

    python python/bench/bench_open.py TRACE [--bin PATH] [--repeat N] [--hta]

Measured, each as the best of N runs (HTA once: it takes minutes):
  - `kinetoscope summary` (the CLI parsing the trace) and `kinetoscope.open()`;
  - for each view of HTA's five analyses (temporal, idle, kernel_classes, comm,
    launches): a fresh CLI run of the view, its first call on an open handle (computed
    from the traces in memory) and a repeated call (the kept document);
  - with --hta, in a child process: HTA's `TraceAnalysis` load of the same file and its
    five calls (get_temporal_breakdown, get_idle_time_breakdown, get_gpu_kernel_breakdown,
    get_comm_comp_overlap, get_cuda_kernel_launch_stats), with the child's peak RSS.

HTA: `pip install HolisticTraceAnalysis psutil` (HTA imports psutil without declaring it).
Make a large trace with `kinetoscope-synth --from SRC --size 1GiB --out TRACE`. Both
kinetoscope sides run with KINETOSCOPE_NO_CACHE=1 (every read parses) and in the same
build profile: compare a release wheel (`maturin develop --release`) with a release
binary. Targets (issue 16): open <= 1.3x summary; a query on the handle >= 10x faster
than a fresh CLI run of the view.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

os.environ["KINETOSCOPE_NO_CACHE"] = "1"

VIEWS = ["temporal", "idle", "kernel_classes", "comm", "launches"]
HTA_CALLS = [
    ("get_temporal_breakdown", {"visualize": False}),
    ("get_idle_time_breakdown", {"visualize": False}),
    ("get_gpu_kernel_breakdown", {"visualize": False}),
    ("get_comm_comp_overlap", {"visualize": False}),
    ("get_cuda_kernel_launch_stats", {"visualize": False}),
]


def timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def best(f, repeat: int) -> float:
    return min(timed(f) for _ in range(repeat))


def hta_child(trace: str) -> None:
    """Load `trace` with HTA and make its five calls; print the timings as JSON."""
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory() as d:
        # HTA reads a folder of rank files.
        os.symlink(os.path.abspath(trace), os.path.join(d, os.path.basename(trace)))
        out = {}
        t0 = time.perf_counter()
        analysis = TraceAnalysis(trace_dir=d)
        out["load"] = time.perf_counter() - t0
        for name, kwargs in HTA_CALLS:
            t0 = time.perf_counter()
            try:
                getattr(analysis, name)(**kwargs)
                out[name] = time.perf_counter() - t0
            except Exception as e:  # a failing call is reported, not fatal
                out[name] = f"failed after {time.perf_counter() - t0:.1f} s: {type(e).__name__}: {e}"
    print(json.dumps(out))


def run_hta(trace: str) -> tuple[dict, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.run([sys.executable, __file__, trace, "--hta-child"], check=True, stdout=subprocess.PIPE, text=True)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if rss <= before:
        rss = float("nan")  # an earlier child was larger: unknown
    return json.loads(p.stdout.strip().splitlines()[-1]), rss / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--bin", default=os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--hta", action="store_true", help="also load the trace with HTA and make its five calls")
    p.add_argument("--hta-child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.hta_child:
        hta_child(a.trace)
        return

    import kinetoscope

    hta = run_hta(a.trace) if a.hta else None

    def cli(view: str) -> None:
        command = ["kernels", "--by-class"] if view == "kernel_classes" else [view]
        subprocess.run([a.bin, *command, a.trace, "--format", "json"], check=True, stdout=subprocess.DEVNULL)

    size = os.path.getsize(a.trace) / 2**20
    print(f"trace: {a.trace} ({size:.1f} MiB); kinetoscope: best of {a.repeat}")
    summary = best(lambda: cli("summary"), a.repeat)
    handles = []
    open_s = best(lambda: handles.append(kinetoscope.open(a.trace)), a.repeat)
    print(f"kinetoscope summary (CLI)       {summary:8.3f} s")
    print(f"kinetoscope.open()              {open_s:8.3f} s   {open_s / summary:5.2f}x summary (target <= 1.3x)")
    first_total = 0.0
    for view in VIEWS:
        fresh = best(lambda: cli(view), a.repeat)
        # The first call on a handle computes; later calls return the kept document.
        first = min(timed(lambda: getattr(h, view)()) for h in handles)
        again = best(lambda: getattr(handles[0], view)(), a.repeat)
        first_total += first
        print(
            f"  {view:15s} CLI {fresh:7.3f} s | handle, first call {first:7.3f} s ({fresh / first:6.1f}x faster,"
            f" target >= 10x) | again {again:7.4f} s"
        )
    assert all(h.files_read == 1 for h in handles)
    total = open_s + first_total
    print(f"kinetoscope open + 5 views      {total:8.3f} s; peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if hta:
        timings, rss = hta
        print(f"HTA (one run, child process, peak RSS {rss:.0f} MiB)")
        print(f"  TraceAnalysis load            {timings['load']:8.3f} s   {timings['load'] / open_s:6.1f}x kinetoscope.open()")
        hta_total = timings["load"]
        for name, _ in HTA_CALLS:
            t = timings[name]
            if isinstance(t, float):
                hta_total += t
                print(f"  {name:29s} {t:8.3f} s")
            else:
                print(f"  {name:29s} {t}")
        print(f"HTA load + 5 calls              {hta_total:8.3f} s   {hta_total / total:6.1f}x kinetoscope open + 5 views")


if __name__ == "__main__":
    main()
