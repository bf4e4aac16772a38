"""kinetoscope: PyTorch profiler traces read once and analysed by the native engine.

>>> import kinetoscope
>>> t = kinetoscope.open("rank0.pt.trace.json.gz")  # read once
>>> t.ops(sort="device_total")["traces"][0]["rows"][0]["name"]
>>> t.table("kernels").to_pandas()                   # a pyarrow.Table
>>> t.events()                                        # every event, as a pyarrow.Table

Every view method returns the document ``kinetoscope VIEW PATH --format json`` writes
(``docs/json.md``) as dicts and lists; ``table`` and ``events`` return ``pyarrow``
tables through the Arrow C stream interface. See ``docs/python.md``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _native
from ._native import KinetoscopeError, __version__

__all__ = ["KinetoscopeError", "Trace", "diff", "open", "__version__"]

PathLike = Union[str, "os.PathLike[str]"]
Document = Dict[str, Any]


class Trace:
    """A trace, rank folder, run folder or Nsight Systems export, read once.

    Every method computes its view from the traces in memory; none reads the file again
    (``files_read`` counts the reads).
    """

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Trace") -> None:
        self._native = native

    def __repr__(self) -> str:
        return f"kinetoscope.Trace({os.fspath(self.path)!r})"

    @property
    def path(self) -> str:
        """The path given to :func:`open`."""
        return os.fspath(self._native.path)

    @property
    def files_read(self) -> int:
        """Trace files read from disk so far (views computed from memory read none)."""
        return self._native.files_read

    def summary(self) -> Document:
        """``kinetoscope summary``: era, rank, devices, span, categories, steps."""
        return self._native.summary()

    def overview(self) -> Document:
        """``kinetoscope overview``: step-time breakdown and GPU metrics."""
        return self._native.overview()

    def ops(self, *, group_by: str = "name", sort: str = "device_self", top: int = 0) -> Document:
        """``kinetoscope ops``: the operator table (``top=0``: every row)."""
        return self._native.ops(group_by=group_by, sort=sort, top=top)

    def kernels(self, *, group_by: str = "name", sort: str = "total", top: int = 0) -> Document:
        """``kinetoscope kernels``: the GPU kernel table."""
        return self._native.kernels(group_by=group_by, sort=sort, top=top)

    def kernel_classes(self, *, hta_compat: bool = False, top: int = 20) -> Document:
        """``kinetoscope kernels --by-class``: computation, communication, memory kernels."""
        return self._native.kernel_classes(hta_compat=hta_compat, top=top)

    def perf(
        self,
        *,
        peak_tflops: Optional[float] = None,
        peak_tbps: Optional[float] = None,
        top: int = 0,
    ) -> Document:
        """``kinetoscope perf``: the roofline per operator and shape."""
        return self._native.perf(peak_tflops=peak_tflops, peak_tbps=peak_tbps, top=top)

    def temporal(self, *, hta_compat: bool = False) -> Document:
        """``kinetoscope temporal``: idle, compute and non-compute GPU time."""
        return self._native.temporal(hta_compat=hta_compat)

    def idle(self, *, hta_compat: bool = False, kernel_wait_us: float = 30.0) -> Document:
        """``kinetoscope idle``: GPU idle time by cause, per stream."""
        return self._native.idle(hta_compat=hta_compat, kernel_wait_us=kernel_wait_us)

    def launches(
        self,
        *,
        hta_compat: bool = False,
        runtime_cutoff_us: float = 50.0,
        delay_cutoff_us: float = 100.0,
        top: int = 20,
    ) -> Document:
        """``kinetoscope launches``: launch delays, short kernels, runtime outliers."""
        return self._native.launches(
            hta_compat=hta_compat,
            runtime_cutoff_us=runtime_cutoff_us,
            delay_cutoff_us=delay_cutoff_us,
            top=top,
        )

    def comm(self, *, hta_compat: bool = False) -> Document:
        """``kinetoscope comm``: overlap, exposed communication, collectives."""
        return self._native.comm(hta_compat=hta_compat)

    def ranks(self, *, clock: str = "auto", top: int = 0) -> Document:
        """``kinetoscope ranks``: the rank comparison of a rank folder."""
        return self._native.ranks(clock=clock, top=top)

    def nvtx(self, *, filter: Optional[str] = None, top: int = 0) -> Document:
        """``kinetoscope nvtx``: NVTX ranges by name with their GPU time."""
        return self._native.nvtx(filter=filter, top=top)

    def sequences(
        self, *, op: Optional[str] = None, min_len: int = 3, max_len: int = 6, top: int = 5
    ) -> Document:
        """``kinetoscope sequences``: the most frequent kernel sequences."""
        return self._native.sequences(op=op, min_len=min_len, max_len=max_len, top=top)

    def critical_path(self, *, step: Optional[int] = None, top: int = 15) -> Document:
        """``kinetoscope critical-path``: the critical path of one step."""
        return self._native.critical_path(step=step, top=top)

    def check(self, *, examples: int = 3) -> Document:
        """``kinetoscope check``: the integrity report."""
        return self._native.check(examples=examples)

    def memory(self, *, points: int = 500, top: int = 0) -> Document:
        """``kinetoscope memory``: the memory view (traces, snapshot or timeline)."""
        return self._native.memory(points=points, top=top)

    def report(self) -> Document:
        """``kinetoscope report``: summary, FLOPs/MFU and ranked findings."""
        return self._native.report()

    @staticmethod
    def table_names() -> List[Tuple[str, str]]:
        """The tables :meth:`table` knows, each with the view it comes from."""
        return _native.Trace.table_names()

    def table(self, name: str, **options: Any) -> "pyarrow.Table":  # noqa: F821
        """The rows of table ``name`` (``ops``, ``kernels``, ``overview``, ...) as a
        ``pyarrow.Table``; ``options`` are the view's keywords."""
        import pyarrow

        return pyarrow.table(self._native._table(name, **options))

    def events(self) -> "pyarrow.Table":  # noqa: F821
        """Every duration, instant and counter event of every trace, as a ``pyarrow.Table``."""
        import pyarrow

        return pyarrow.table(self._native._events())


def open(path: PathLike, *, strict: bool = False, threads: Optional[int] = None) -> Trace:
    """Read ``path`` (a trace, a rank or run folder, an Nsight Systems export) once.

    ``strict``: refuse malformed JSON instead of repairing it; ``threads``: parser
    threads (default: every core). Raises :class:`KinetoscopeError` naming the file when
    it cannot be read.
    """
    return Trace(_native.open(os.fspath(path), strict=strict, threads=threads))


def diff(
    base: PathLike,
    new: PathLike,
    *,
    fail_if: Sequence[str] = (),
    batch_size: Optional[float] = None,
    tokens_per_step: Optional[float] = None,
    strict: bool = False,
) -> Document:
    """``kinetoscope diff BASE NEW``: the two runs compared (``docs/diff.md``); the
    document's ``gate`` holds the verdict of the ``fail_if`` expressions."""
    return _native.diff(
        os.fspath(base),
        os.fspath(new),
        fail_if=list(fail_if),
        batch_size=batch_size,
        tokens_per_step=tokens_per_step,
        strict=strict,
    )
