#!/usr/bin/env python3
"""The Nsight Systems benchmark: `kinetoscope summary` on a grown export against the
`sqlite3` command line running the four aggregate queries `nsys stats` users run
(kernels by name, runtime calls by name, copies by kind, NVTX ranges by text).

    python3 scripts/nsys_grow.py SRC.sqlite /tmp/grown.sqlite --copies 200
    python3 scripts/nsys_bench.py /tmp/grown.sqlite target/release/kinetoscope [--runs 5]

Runs alternate (sqlite3, kinetoscope, sqlite3, ...) so the ratio holds while the
machine's speed drifts; prints each run, the medians, the ratio of the medians, and the
peak RSS of kinetoscope against the file's size (ru_maxrss of each finished child, which
includes this small Python process's own, about 10 MiB).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

QUERIES = """
SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
  JOIN StringIds s ON s.id = k.shortName GROUP BY k.shortName;
SELECT s.value, count(*), sum(r."end" - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
  JOIN StringIds s ON s.id = r.nameId GROUP BY r.nameId;
SELECT copyKind, count(*), sum(bytes), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY
  GROUP BY copyKind;
SELECT coalesce(n.text, s.value), count(*), sum(n."end" - n.start) FROM NVTX_EVENTS n
  LEFT JOIN StringIds s ON s.id = n.textId WHERE n."end" IS NOT NULL GROUP BY 1;
"""


def run(cmd):
    """Wall seconds and the child's peak RSS in bytes (its own ru_maxrss, from wait4)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} exited with {p.returncode}")
    return wall, usage.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export")
    ap.add_argument("kinetoscope")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    size = os.path.getsize(a.export)
    sql = ["sqlite3", f"file:{a.export}?mode=ro&immutable=1", QUERIES]
    # Every timed run parses the export: the trace cache would answer from its entry.
    ks = [a.kinetoscope, "summary", "--no-cache", a.export]
    run(sql)  # warm the page cache
    run(ks)
    walls_sql, walls_ks, peaks = [], [], []
    for i in range(a.runs):
        w, _ = run(sql)
        walls_sql.append(w)
        w, p = run(ks)
        walls_ks.append(w)
        peaks.append(p)
        print(f"run {i + 1}: sqlite3 {walls_sql[-1]:.3f} s, kinetoscope summary {walls_ks[-1]:.3f} s")
    ms, mk = statistics.median(walls_sql), statistics.median(walls_ks)
    peak = max(peaks)
    print(f"export {size / 2**20:.1f} MiB")
    print(f"median: sqlite3 four queries {ms:.3f} s, kinetoscope summary {mk:.3f} s, ratio {mk / ms:.2f}")
    print(f"kinetoscope peak RSS {peak / 2**20:.1f} MiB = {peak / size:.2f} x the file")


if __name__ == "__main__":
    sys.exit(main())
