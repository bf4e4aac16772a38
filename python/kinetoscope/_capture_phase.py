"""One phase of a `kinetoscope.capture` run being recorded: its torch profiler (with
the schedule or recording everything), what each cycle writes (trace, memory timeline,
key_averages tables), its cProfile file and its CUDA memory history and snapshots."""

from __future__ import annotations

import contextlib
import cProfile
import json
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, List, Optional

from . import _capture_cuda as cuda
from ._capture_names import PhaseNames, table_name
from ._capture_schedule import Schedule

if TYPE_CHECKING:
    from .capture import ProfileRun


class Phase:
    """One phase being recorded (the object `run.phase(...)` yields)."""

    def __init__(self, run: "ProfileRun", names: PhaseNames, schedule: Optional[Schedule]):
        self.run = run
        self.names = names
        self.schedule = schedule
        self.steps = 0
        self.cycles = 0
        self.prof = None
        self.written: List[Path] = []

    def say(self, message: str) -> None:
        """A progress line tagged with the phase."""
        self.run.progress.say(self.names.phase, message)

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Record the `with` block: cProfile, the torch profiler, the CUDA history."""
        run, torch = self.run, self.run._torch
        self._start()
        profiler = None
        try:
            if run.cprofile:
                profiler = cProfile.Profile()
                profiler.enable()
            prof = self._profiler(torch)
            with _quiet_cycle_warning():
                prof.__enter__()
            try:
                self.prof = prof
                yield
            finally:
                with _quiet_cycle_warning():
                    prof.__exit__(None, None, None)
        finally:
            self.prof = None
            if profiler is not None:
                profiler.disable()
                self._write(self.names.pstats(), profiler.dump_stats)
            self._finish_cuda()
            self._say_end()

    def _start(self) -> None:
        run = self.run
        if self.schedule is None:
            self.say(f"stage {self.names.stage}: recording the whole phase")
        else:
            self.say(f"stage {self.names.stage}: " + "; ".join(self.schedule.plan_lines()))
        self.on_cuda = run.device.startswith("cuda") and run.snapshots
        if self.on_cuda:
            why = cuda.start_history(run._torch, run.max_entries)
            if why:
                self.say(f"no CUDA memory snapshot: {why}")
                self.on_cuda = False
                return
            why = cuda.set_oom_dumper(run._torch, self._dump_oom)
            if why:
                self.say(f"no snapshot on out-of-memory errors: {why}")

    def _profiler(self, torch):
        from torch.profiler import ProfilerAction, ProfilerActivity, profile
        from torch.profiler import schedule as torch_schedule

        activities = [ProfilerActivity.CPU]
        if self.run.device.startswith("cuda"):
            activities.append(ProfilerActivity.CUDA)
        if self.schedule is None:
            fn = lambda _step: ProfilerAction.RECORD  # noqa: E731 (every step, with step marks)
        else:
            s = self.schedule
            with _quiet_warmup_warning():
                fn = torch_schedule(
                    wait=s.wait,
                    warmup=s.warmup,
                    active=s.active,
                    repeat=s.repeat,
                    skip_first=s.skip_first,
                    **({"skip_first_wait": s.skip_first_wait} if s.skip_first_wait else {}),
                )
        return profile(
            activities=activities,
            schedule=fn,
            on_trace_ready=self._trace_ready,
            **self.run.options,
        )

    def step(self) -> None:
        """One step done: `prof.step()`."""
        self.steps += 1
        if self.prof is not None:
            with _quiet_cycle_warning():
                self.prof.step()

    # -- what a cycle writes -----------------------------------------------------------

    def _trace_ready(self, prof) -> None:
        """torch's `on_trace_ready`: the trace, memory timeline and tables of the phase
        (unscheduled) or of one cycle."""
        with _quiet_cycle_warning():
            # export_memory_timeline's deprecation is torch's note to library writers.
            warnings.simplefilter("ignore", FutureWarning)
            self._write_cycle(prof)

    def _write_cycle(self, prof) -> None:
        run = self.run
        self.cycles += 1
        stamp = None if self.schedule is None else time.time_ns() // 1_000_000
        cycle = None if self.schedule is None else self.cycles
        self._write(self.names.trace(stamp), prof.export_chrome_trace)
        if run.memory_timeline:
            device = "cuda:0" if run.device.startswith("cuda") else "cpu"
            try:
                self._write(
                    self.names.memory_timeline(stamp),
                    lambda p: prof.export_memory_timeline(p, device=device),
                )
            except Exception as e:  # torch's timeline export fails on some traces
                self.say(f"no memory timeline: {type(e).__name__}: {e}")
            else:
                self._drop_if_empty_timeline()
        if run.tables:
            self._write_tables(prof, cycle)

    def _drop_if_empty_timeline(self) -> None:
        """Remove the timeline just written when it holds no point (`[[], []]`: torch
        saw no allocation on the device), which no reader can use."""
        path = self.written[-1]
        if path.stat().st_size > 64 or json.loads(path.read_text()) != [[], []]:
            return
        path.unlink()
        self.written.pop()
        self.run.files.pop()
        self.say(f"no memory timeline: torch recorded no allocation on {self.run.device}")

    def _write_tables(self, prof, cycle: Optional[int]) -> None:
        run = self.run
        folder = run.dir / self.names.tables_dir(cycle)
        folder.mkdir(parents=True, exist_ok=True)
        averages = prof.key_averages()
        for key in run.sort_keys_for_tables():
            try:
                text = averages.table(sort_by=key, row_limit=run.row_limit)
            except (KeyError, AttributeError, ValueError) as e:
                self.say(f"no table sorted by {key}: {e}")
                continue
            name = table_name(run.rank, run.local_rank, key)
            self._write(folder.relative_to(run.dir) / name, lambda p, t=text: _write_text(p, t))

    def _write(self, name, writer) -> None:
        path = self.run.dir / name
        if path.exists():
            # Never over another run's file (a run_name used twice).
            raise FileExistsError(f"{path}: exists; capture never overwrites a file")
        writer(str(path))
        self.written.append(path)
        self.run.wrote(path)

    # -- CUDA ------------------------------------------------------------------------

    def _finish_cuda(self) -> None:
        if not self.on_cuda:
            return
        torch = self.run._torch
        try:
            torch.cuda.synchronize()
            self._write(self.names.snapshot(), lambda p: cuda.dump_snapshot(torch, Path(p)))
        finally:
            cuda.stop_history(torch)
            cuda.set_oom_dumper(torch, None)

    def _dump_oom(self, device: int, alloc: int, device_alloc: int, device_free: int) -> None:
        """torch's out-of-memory observer: dump the snapshot as the allocation fails."""
        torch = self.run._torch
        try:
            self._write(self.names.snapshot(oom=True), lambda p: cuda.dump_snapshot(torch, Path(p)))
        except Exception as e:  # torch is raising OutOfMemoryError: never hide it
            self.say(f"CUDA out of memory; the snapshot could not be written: {e}")
            return
        self.say(
            f"CUDA out of memory on device {device} asking {alloc} bytes "
            f"({device_free} free): snapshot {self.written[-1].name}"
        )

    def _say_end(self) -> None:
        steps = f"{self.steps} steps taken"
        if self.schedule is not None:
            kept = self.schedule.recorded_steps(self.steps + 1)
            steps += f", steps recorded: {_ranges(kept) if kept else 'none'}"
            if not kept:
                self.say("the schedule recorded no step: run.step() each step, or scheduled=False")
        names = ", ".join(sorted({_short(p, self.run.dir) for p in self.written})) or "nothing"
        self.say(f"done ({steps}); wrote {names}")


def _short(path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    return str(rel.parent) + "/" if rel.parent != Path(".") else str(rel)


def _ranges(steps: List[int]) -> str:
    """`[3, 4, 5, 8]` → `3–5, 8`."""
    out = []
    start = prev = steps[0]
    for s in steps[1:] + [None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        out.append(str(start) if start == prev else f"{start}\u2013{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(out)


def _write_text(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        if not text.endswith("\n"):
            f.write("\n")


@contextlib.contextmanager
def _quiet_cycle_warning() -> Iterator[None]:
    """torch's note that a new cycle drops the last one's events (what a schedule is for),
    silenced: it is printed to library writers, not to the user of a capture."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle")
        yield


@contextlib.contextmanager
def _quiet_warmup_warning() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Profiler won't be using warmup")
        yield
