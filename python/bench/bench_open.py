"""open() of a large trace against `kinetoscope summary`, and a query on the open handle
against a fresh CLI run of the same view (docs/python.md).

    python python/bench/bench_open.py TRACE [--bin PATH] [--repeat N] [--view ops]

Make a large trace with `kinetoscope-synth --from SRC --size 200MiB --out TRACE`. Both
sides run with KINETOSCOPE_NO_CACHE=1 (every read parses) and in the same build
profile: compare a release wheel with a release binary. Targets: open ≤ 1.3× summary;
a query on the handle ≥ 10× faster than a fresh CLI run of the view.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time

os.environ["KINETOSCOPE_NO_CACHE"] = "1"

import kinetoscope  # noqa: E402


def best(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--bin", default=os.environ.get("KINETOSCOPE_BIN") or shutil.which("kinetoscope"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--view", default="ops")
    a = p.parse_args()

    def cli(view: str) -> None:
        subprocess.run([a.bin, view, a.trace, "--format", "json"], check=True, stdout=subprocess.DEVNULL)

    summary = best(lambda: cli("summary"), a.repeat)
    opened = []
    open_s = best(lambda: opened.append(kinetoscope.open(a.trace)), a.repeat)
    handle = opened[-1]
    fresh = best(lambda: cli(a.view), a.repeat)
    query = best(lambda: getattr(handle, a.view)(), a.repeat)
    table = best(lambda: handle.table(a.view), a.repeat)
    size = os.path.getsize(a.trace) / 2**20
    print(f"trace: {a.trace} ({size:.1f} MiB), best of {a.repeat}")
    print(f"kinetoscope summary (CLI):  {summary:8.3f} s")
    print(f"kinetoscope.open():         {open_s:8.3f} s   {open_s / summary:5.2f}x summary (target <= 1.3x)")
    print(f"kinetoscope {a.view} (CLI):      {fresh:8.3f} s")
    print(f"handle.{a.view}():              {query:8.3f} s   {fresh / query:6.1f}x faster (target >= 10x)")
    print(f"handle.table({a.view!r}):        {table:8.3f} s   {fresh / table:6.1f}x faster")
    assert handle.files_read == 1


if __name__ == "__main__":
    main()
