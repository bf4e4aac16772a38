#!/usr/bin/env python3
"""Simulate a slower (or faster) machine: write a copy of a Kineto trace in which every
duration, and every timestamp's distance from the first one, is multiplied by FACTOR.

Nothing else changes (names, shapes, calls, memory records), so the copy is the same
code on a machine uniformly FACTOR times slower. This is synthetic: a real slower
machine does not slow every operator by exactly the same factor.

Usage::

    python corpus/scale_trace.py corpus/pairs/repeat/base.json.gz 1.18 corpus/pairs/machine/new.json.gz
"""

import gzip
import json
import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, factor, dst = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    t0 = min(e["ts"] for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M")
    for e in events:
        if e.get("ph") == "M":
            continue
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = round(t0 + (e["ts"] - t0) * factor, 3)
        if isinstance(e.get("dur"), (int, float)):
            e["dur"] = round(e["dur"] * factor, 3)
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(trace, f)
    print(f"wrote {dst} ({os.path.getsize(dst) // 1024} KiB), durations x {factor}")


if __name__ == "__main__":
    main()
