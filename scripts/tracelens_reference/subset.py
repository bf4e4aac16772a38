#!/usr/bin/env python3
"""Copy the columns kinetoscope's tests compare from TraceLens's checked-in perf-report CSVs.

Usage: subset.py SRC_DIR DST_DIR  (SRC_DIR: one `<trace>_perf_report_csvs` folder of
AMD-AGI/TraceLens `tests/traces/`, or its copy). Rows and values are unchanged; only the
columns below are kept (the others hold long kernel-detail lists the tests do not read).
"""
import csv
import sys
from pathlib import Path

PERF = ["name", "Input Dims_first", "Input type_first", "Input Strides_first",
        "Concrete Inputs_first", "GFLOPS_first", "Data Moved (MB)_first", "Compute Spec",
        "Kernel Time (µs)_sum", "name_count"]
COLUMNS = {
    "kernel_summary.csv": ["Parent cpu_op", "Kernel name", "Kernel stream",
                           "Kernel duration (µs)_sum", "Kernel duration (µs)_count"],
    "ops_summary.csv": ["name", "total_direct_kernel_time_sum", "Count"],
    "unified_perf_summary.csv": ["name", "Input Dims", "Input type", "Input Strides",
                                 "Concrete Inputs", "operation_count", "total_duration_us",
                                 "Kernel Time (µs)_sum"],
    "GEMM.csv": PERF, "SDPA_fwd.csv": PERF, "CONV_fwd.csv": PERF,
    "BinaryElementwise.csv": PERF, "UnaryElementwise.csv": PERF, "Reduce_fwd.csv": PERF,
    "Normalization.csv": PERF,
}

src, dst = Path(sys.argv[1]), Path(sys.argv[2])
dst.mkdir(parents=True, exist_ok=True)
for name, cols in COLUMNS.items():
    if not (src / name).exists():
        continue
    with open(src / name, newline="") as f, open(dst / name, "w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(cols)
        for row in csv.DictReader(f):
            w.writerow([row[c] for c in cols])
