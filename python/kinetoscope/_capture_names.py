"""File names of a `kinetoscope.capture` run folder, as kinetoscope's reader groups them
into phases (`stage<N>-<phase>...`) and ranks (`rank<R>`).

One rank recording (the default): nanochat's names, `stage<N>-<phase>_trace.json`,
`_memory_timeline.json`, `_mem.pickle`, and `stage<N>-<phase>.pstats`. Every rank
recording: `stage<N>-<phase>.rank<R>.pt.trace.json`, `.rank<R>.memory_timeline.json`,
`.rank<R>.mem.pickle`, `.rank<R>.pstats` (the reader takes the phase up to the first dot
and the rank from `rank<R>`). A scheduled phase writes one trace per cycle under
`tensorboard_trace_handler`'s name, its worker being the phase's prefix:
`stage<N>-<phase>[.rank<R>].<ms>.pt.trace.json`. key_averages tables are oumi's
`prof_<rank>_local_<local_rank>_<sort_key>.txt`, in `tables/stage<N>-<phase>[.cycle<K>]/`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_PHASE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def check_phase_name(name: str) -> str:
    """`name` if a phase may be called so: letters, digits, `_` and `-` (no dot, which
    would end the phase in a file name; no path separator), at most 64 characters."""
    if not isinstance(name, str) or not _PHASE_NAME.fullmatch(name):
        raise ValueError(
            f"phase name {name!r}: use letters, digits, '_' and '-' (1 to 64 characters, "
            "starting with a letter or digit)"
        )
    return name


@dataclass(frozen=True)
class PhaseNames:
    """The names of one phase's files for one rank."""

    stage: int
    phase: str
    rank: Optional[int]  # None: only one rank records, names without a rank
    gzip: bool = False

    @property
    def worker(self) -> str:
        """The prefix of every file: `stage<N>-<phase>[.rank<R>]`."""
        base = f"stage{self.stage}-{self.phase}"
        return base if self.rank is None else f"{base}.rank{self.rank}"

    def _json(self) -> str:
        return ".json.gz" if self.gzip else ".json"

    def trace(self, stamp_ms: Optional[int] = None) -> str:
        """The trace of an unscheduled phase (`stamp_ms` None) or of one cycle."""
        if stamp_ms is not None:
            return f"{self.worker}.{stamp_ms}.pt.trace{self._json()}"
        if self.rank is None:
            return f"{self.worker}_trace{self._json()}"
        return f"{self.worker}.pt.trace{self._json()}"

    def memory_timeline(self, stamp_ms: Optional[int] = None) -> str:
        """The memory timeline (coalesced JSON) beside that trace."""
        if stamp_ms is not None:
            return f"{self.worker}.{stamp_ms}.memory_timeline.json"
        if self.rank is None:
            return f"{self.worker}_memory_timeline.json"
        return f"{self.worker}.memory_timeline.json"

    def snapshot(self, oom: bool = False) -> str:
        """The CUDA memory snapshot at the phase's end, or at an out-of-memory error."""
        if oom:
            return f"{self.worker}.oom.pickle"
        if self.rank is None:
            return f"{self.worker}_mem.pickle"
        return f"{self.worker}.mem.pickle"

    def pstats(self) -> str:
        """The cProfile file of the phase."""
        return f"{self.worker}.pstats"

    def tables_dir(self, cycle: Optional[int] = None) -> str:
        """The folder of the key_averages tables of the phase, or of its schedule's
        cycle `cycle` (1-based), relative to the run folder; every rank writes there."""
        base = f"stage{self.stage}-{self.phase}"
        return f"tables/{base}" if cycle is None else f"tables/{base}.cycle{cycle}"


def table_name(rank: int, local_rank: int, sort_key: str) -> str:
    """oumi's name of a key_averages table."""
    return f"prof_{rank}_local_{local_rank}_{sort_key}.txt"
