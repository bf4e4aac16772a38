#!/usr/bin/env python3
"""Grow a real Nsight Systems SQLite export N times for the nsys benchmark.

    python3 scripts/nsys_grow.py SRC.sqlite OUT.sqlite --copies 200

Every row of the activity tables (kernels, graph executions, copies, sets, syncs,
runtime/driver calls, NVTX) is repeated COPIES times, copy k shifted by k times the
capture's span in time and by k times (the largest correlation id + 1) in correlation
id, so copies never overlap and launches still link to their own kernels. Other tables
(strings, devices, processes, enums) are copied once. The input is only read.
"""
import argparse
import shutil
import sqlite3
import sys

ACTIVITY_PREFIXES = ("CUPTI_ACTIVITY_KIND_", "NVTX_EVENTS")
TIME_COLUMNS = ("start", "end", "timestamp")


def activity_tables(db):
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return [n for n in names if n.startswith(ACTIVITY_PREFIXES)]


def columns(db, table):
    """(name, is_integer_primary_key) per column."""
    return [(r[1], r[5] > 0 and r[2].upper() == "INTEGER") for r in db.execute(f'PRAGMA table_info("{table}")')]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=200)
    a = ap.parse_args()
    if a.copies < 1:
        sys.exit("--copies must be at least 1")
    shutil.copyfile(a.src, a.out)
    db = sqlite3.connect(a.out)
    tables = activity_tables(db)
    lo, hi, corr = None, None, 0
    for t in tables:
        cols = [c for c, _ in columns(db, t)]
        for c in ("start", "end"):
            if c in cols:
                mn, mx = db.execute(f'SELECT min("{c}"), max("{c}") FROM "{t}"').fetchone()
                if mn is not None:
                    lo = mn if lo is None else min(lo, mn)
                    hi = mx if hi is None else max(hi, mx)
        if "correlationId" in cols:
            m = db.execute(f'SELECT max(correlationId) FROM "{t}"').fetchone()[0]
            corr = max(corr, m or 0)
    if lo is None:
        sys.exit(f"{a.src}: no activity rows with times")
    span = hi - lo + 1
    corr += 1
    for t in tables:
        cols = columns(db, t)
        keep = [c for c, pk in cols if not pk]
        n = db.execute(f'SELECT max(rowid) FROM "{t}"').fetchone()[0] or 0
        for k in range(1, a.copies):
            exprs = []
            for c in keep:
                if c in TIME_COLUMNS:
                    exprs.append(f'"{c}" + {k * span}')
                elif c == "correlationId":
                    exprs.append(f'"{c}" + {k * corr}')
                else:
                    exprs.append(f'"{c}"')
            names = ", ".join(f'"{c}"' for c in keep)
            db.execute(f'INSERT INTO "{t}" ({names}) SELECT {", ".join(exprs)} FROM "{t}" WHERE rowid <= {n}')
        db.commit()
    db.execute("VACUUM")
    db.close()
    print(f"{a.out}: {a.copies} copies of {len(tables)} activity tables, span {span} ns each")


if __name__ == "__main__":
    main()
