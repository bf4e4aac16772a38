"""Record a training run in phases, in the layout kinetoscope reads (`docs/capture.md`).

```python
from kinetoscope.capture import profile_run

with profile_run("profiles", wait=1, warmup=1, active=3, cprofile=True) as run:
    with run.phase("model_init", scheduled=False):
        model = build()
    with run.phase("train"):
        for batch in data:
            train_step(model, batch)
            run.step()
```

writes `profiles/<YYYY-mm-dd_HHMMSS>/stage1-model_init_trace.json`,
`stage2-train.<ms>.pt.trace.json`, memory timelines, CUDA snapshots on a GPU, cProfile
files and key_averages tables, prints `[PROFILER:<phase>]` progress lines, and ends with
the command that analyses the folder (or, with `analyze=True`, runs it).

torch is imported when a run starts, never when this module is imported, and the native
part of the kinetoscope package is never imported: capture works without it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
from pathlib import Path
from typing import IO, Iterable, Iterator, List, Optional, Sequence, Union

from . import _capture_cuda as cuda
from ._capture_names import PhaseNames, check_phase_name
from ._capture_output import Progress, analyze, report_command
from ._capture_phase import Phase
from ._capture_schedule import Schedule

__all__ = ["profile_run", "ProfileRun", "Schedule", "current_rank"]

#: Sort keys of the key_averages tables on CPU (oumi's, with memory when recorded).
CPU_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total")
#: Sort keys added on CUDA.
CUDA_SORT_KEYS = ("cuda_time_total", "self_cuda_time_total")


def current_rank() -> tuple:
    """(rank, local rank, world size) of this process: from `torch.distributed` when it
    is initialised, else the `RANK`, `LOCAL_RANK` and `WORLD_SIZE` variables (0, 0, 1
    when unset)."""
    local = _env_int("LOCAL_RANK", 0)
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), local, dist.get_world_size()
    except ImportError:
        pass
    return _env_int("RANK", 0), local, _env_int("WORLD_SIZE", 1)


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _ranks_recording(ranks: Union[str, int, Iterable[int]]) -> Optional[frozenset]:
    """The ranks that record (`None`: all)."""
    if ranks == "all":
        return None
    if isinstance(ranks, int):
        return frozenset([ranks])
    if isinstance(ranks, str):
        raise ValueError(f"ranks={ranks!r}: use 'all', a rank or a list of ranks")
    return frozenset(int(r) for r in ranks)


class ProfileRun:
    """A profiled run writing to a new `out_dir/<YYYY-mm-dd_HHMMSS>/` run folder; use
    `with profile_run(...) as run:`. Options (all keywords; `docs/capture.md`):

    - schedule: `skip_first`, `wait`, `warmup`, `active` (None: no schedule), `repeat`
      (0: forever), `skip_first_wait`, as `torch.profiler.schedule` takes them;
    - profiler: `record_shapes`, `with_stack`, `with_flops`, `with_modules`,
      `profile_memory` (and `memory_timeline`, written when memory, shapes and stacks
      are recorded), `gzip` (traces as `.json.gz`);
    - tables: `tables`, `row_limit`, `sort_keys`; `cprofile`: a pstats file per phase;
    - CUDA: `snapshots`, `max_entries` (the allocator history kept), `device`;
    - ranks: `ranks` (0 by default, `"all"`, a rank or a list), `run_name` (the folder
      name, else `$KINETOSCOPE_RUN_NAME`, else the time);
    - output: `stream` (stderr), `colour` (None: on a terminal without `NO_COLOR`),
      `analyze` (run `kinetoscope report` on the folder at the end).
    """

    def __init__(
        self,
        out_dir: Union[str, os.PathLike],
        *,
        skip_first: int = 0,
        wait: int = 0,
        warmup: int = 1,
        active: Optional[int] = None,
        repeat: int = 1,
        skip_first_wait: int = 0,
        record_shapes: bool = True,
        with_stack: bool = True,
        with_flops: bool = True,
        with_modules: bool = False,
        profile_memory: bool = True,
        memory_timeline: bool = True,
        row_limit: int = 30,
        sort_keys: Optional[Sequence[str]] = None,
        tables: bool = True,
        cprofile: bool = False,
        snapshots: bool = True,
        max_entries: int = 100_000,
        ranks: Union[str, int, Iterable[int]] = 0,
        device: Optional[str] = None,
        gzip: bool = False,
        run_name: Optional[str] = None,
        analyze: bool = False,
        stream: Optional[IO[str]] = None,
        colour: Optional[bool] = None,
    ):
        self.out_dir = Path(out_dir)
        self.schedule = (
            None
            if active is None
            else Schedule(wait, warmup, active, repeat, skip_first, skip_first_wait)
        )
        self.options = dict(
            record_shapes=record_shapes,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
            profile_memory=profile_memory,
        )
        self.memory_timeline = memory_timeline and profile_memory and record_shapes and with_stack
        self.row_limit = row_limit
        self.sort_keys = tuple(sort_keys) if sort_keys is not None else None
        self.tables = tables
        self.cprofile = cprofile
        self.snapshots = snapshots
        self.max_entries = max_entries
        self.ranks = _ranks_recording(ranks)
        self.device = device
        self.gzip = gzip
        self.run_name = run_name
        self.analyze = analyze
        self.progress = Progress(stream, colour)
        #: The run folder (set when the run starts).
        self.dir: Optional[Path] = None
        #: Every file written, in order.
        self.files: List[Path] = []
        #: Analysis exit code with `analyze=True` (None: not run).
        self.analysis_returncode: Optional[int] = None
        self._stage = 0
        self._phase: Optional[Phase] = None
        self._torch = None

    # -- the run ---------------------------------------------------------------------

    def __enter__(self) -> "ProfileRun":
        import torch  # imported here: the module itself must not need torch

        self._torch = torch
        if self.device is None:
            self.device = "cuda" if cuda.cuda_ready(torch) else "cpu"
        self.rank, self.local_rank, self.world_size = current_rank()
        self.recording = self.ranks is None or self.rank in self.ranks
        self.dir = self.out_dir / self._folder_name()
        if self.recording:
            if self.ranks is not None and len(self.ranks) == 1 and _non_empty(self.dir):
                raise FileExistsError(f"{self.dir}: a run folder with files; give another run_name")
            self.dir.mkdir(parents=True, exist_ok=True)
            self._say_start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.recording or self.dir is None:
            return
        if self.analyze and exc_type is None and self._is_first_recorder():
            self.analysis_returncode = analyze(self.dir, self.progress)
        else:
            self.progress.say("run", f"analyse with: {report_command(self.dir)}")

    def _is_first_recorder(self) -> bool:
        return self.rank == (0 if self.ranks is None else min(self.ranks))

    def _folder_name(self) -> str:
        """`run_name`, else rank 0's start time (shared with the other ranks when
        `torch.distributed` is initialised), `YYYY-mm-dd_HHMMSS`."""
        name = self.run_name or os.environ.get("KINETOSCOPE_RUN_NAME")
        if not name:
            name = _dt.datetime.now().strftime("%Y-%m-%d_%H%M%S")
            name = _shared_with_ranks(self._torch, name)
            if self.ranks is not None and len(self.ranks) == 1 and (self.out_dir / name).exists():
                name = _free_name(self.out_dir, name)
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"run_name {name!r}: a folder name, without '/'")
        return name

    def _say_start(self) -> None:
        torch = self._torch
        self.progress.say(
            "run",
            f"run folder {self.dir} (torch {torch.__version__}, {self.device}, "
            f"rank {self.rank} of {self.world_size})",
        )
        if self.device == "cpu":
            self.progress.say("run", "CPU only: no CUDA memory snapshots, no OOM snapshot")
        if self.schedule is not None:
            self.progress.say("run", "schedule: " + "; ".join(self.schedule.plan_lines()))

    # -- phases ----------------------------------------------------------------------

    @contextlib.contextmanager
    def phase(self, name: str, scheduled: Optional[bool] = None) -> Iterator["Phase"]:
        """Profile the code of a `with` block as phase `name`: stage N+1 of the run.
        `scheduled` (default: whether the run has a schedule) records only the steps the
        schedule picks; `run.step()` marks each step. An unscheduled phase is recorded
        whole, each `run.step()` still marking a `ProfilerStep#N`."""
        check_phase_name(name)
        if self.dir is None:
            raise RuntimeError("run.phase(...) inside `with profile_run(...) as run:`")
        if self._phase is not None:
            raise RuntimeError(
                f"phase {name!r} inside phase {self._phase.names.phase!r}: phases do not nest"
            )
        self._stage += 1
        if scheduled is None:
            scheduled = self.schedule is not None
        if scheduled and self.schedule is None:
            raise ValueError(f"phase {name!r}: scheduled=True needs a schedule (active=...)")
        if not self.recording:
            self._phase = Phase(self, PhaseNames(self._stage, name, None), None)
            try:
                yield self._phase
            finally:
                self._phase = None
            return
        rank = None if self.ranks is not None and len(self.ranks) == 1 else self.rank
        names = PhaseNames(self._stage, name, rank, self.gzip)
        phase = Phase(self, names, self.schedule if scheduled else None)
        self._phase = phase
        try:
            with phase.recording():
                yield phase
        finally:
            self._phase = None

    def step(self) -> None:
        """Mark the end of a step of the current phase (`prof.step()`)."""
        if self._phase is None:
            raise RuntimeError("run.step() outside a phase")
        self._phase.step()

    def sort_keys_for_tables(self) -> Sequence[str]:
        """The `sort_by` keys of the tables: `sort_keys`, else oumi's for the device."""
        if self.sort_keys is not None:
            return self.sort_keys
        keys = list(CPU_SORT_KEYS)
        if self.options["profile_memory"]:
            keys.append("self_cpu_memory_usage")
        if self.device.startswith("cuda"):
            keys.extend(CUDA_SORT_KEYS)
            if self.options["profile_memory"]:
                keys.append("self_cuda_memory_usage")
        return keys

    def wrote(self, path: Path) -> None:
        """Note a file written."""
        self.files.append(path)


def _shared_with_ranks(torch, name: str) -> str:
    """Rank 0's `name` on every rank when `torch.distributed` is initialised."""
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return name
    box = [name]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def _non_empty(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())


def _free_name(out_dir: Path, name: str) -> str:
    """`name`, else `name-2`, `name-3`, ... : the first that does not exist."""
    k = 2
    while (out_dir / f"{name}-{k}").exists():
        k += 1
    return f"{name}-{k}"


#: The entry point: `with profile_run(out_dir, ...) as run:` (the class itself).
profile_run = ProfileRun
