"""The map of a Parquet export on a Dask cluster, as Nsight Systems' recipes do.

Each trace of a job becomes one Dask task that reads it and writes its per-rank Parquet
tables (``docs/parquet.md``) into a folder every worker sees; the client then puts the
tables in place and writes the manifest. The reduce runs on one node over the Parquet:
``kinetoscope ranks OUT_DIR``, or DuckDB, Polars, pandas or Spark over
``OUT_DIR/<table>/*.parquet``. The result is the one ``kinetoscope export PATH --parquet
OUT_DIR`` writes in one process.

>>> from dask.distributed import Client
>>> import kinetoscope.distributed
>>> client = Client(scheduler_file="scheduler.json")   # or Client(LocalCluster(...))
>>> kinetoscope.distributed.export("/shared/job42/traces", client, "/shared/job42/parquet")

Only the package and Dask are needed on the workers (the same Python environment as the
client); torch is not.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]

__all__ = ["export", "trace_files"]


def trace_files(path: PathLike) -> List[str]:
    """The trace files of ``path`` (a trace, a rank folder or a run folder), in the order
    the engine reads them: one task each."""
    return [os.fspath(p) for p in _native._trace_files(os.fspath(path))]


def _export_part(path: str, out_dir: str, part: int, strict: bool, threads: Optional[int]) -> str:
    """One task: read ``path`` and write its tables as part ``part`` (runs on a worker)."""
    from kinetoscope import _native as native

    return native._parquet_part(path, out_dir, part, strict=strict, threads=threads)


def export(
    paths: Union[PathLike, Sequence[PathLike]],
    client: Any,
    out_dir: PathLike,
    *,
    strict: bool = False,
    threads_per_task: Optional[int] = None,
) -> Dict[str, Any]:
    """Export every trace of ``paths`` to Parquet in ``out_dir``, one Dask task per trace.

    ``paths`` is a trace, a rank folder or run folder (its traces, as the engine lists
    them), or a list of trace files. ``client`` is a ``dask.distributed.Client``; its
    workers must see ``paths`` and ``out_dir`` at the same paths (a shared file system).
    ``out_dir`` must be new, empty or a previous export, as for ``kinetoscope export``.
    ``threads_per_task`` caps each task's reader threads (default: the worker's cores).

    Returns the export document (``kinetoscope export --format json``): the manifest with
    each rank's file and row counts, and the traces that could not be read.
    """
    if isinstance(paths, (str, os.PathLike)):
        given = os.fspath(paths)
        files = trace_files(given)
    else:
        files = [os.fspath(p) for p in paths]
        given = ", ".join(files)
    if not files:
        raise _native.KinetoscopeError(f"{given}: no trace files to export")
    out = os.fspath(out_dir)
    _native._parquet_begin(out)
    futures = client.map(
        _export_part,
        files,
        [out] * len(files),
        range(len(files)),
        [strict] * len(files),
        [threads_per_task] * len(files),
        pure=False,
    )
    parts = client.gather(futures)
    return _native._parquet_finish(out, given, list(parts))
