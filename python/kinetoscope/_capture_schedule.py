"""The profiler schedule of `kinetoscope.capture`: which steps torch records, computed
without torch, and the plan printed before a scheduled phase starts.

`action(k)` gives the same answer as `torch.profiler.schedule(...)(k)` for step `k`
(the region after the k-th `prof.step()` call, `ProfilerStep#k` in the trace): the
tests compare the two over many parameter combinations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

#: Step actions, named as `torch.profiler.ProfilerAction` names them.
NONE = "NONE"
WARMUP = "WARMUP"
RECORD = "RECORD"
RECORD_AND_SAVE = "RECORD_AND_SAVE"


@dataclass(frozen=True)
class Schedule:
    """The oumi / `torch.profiler.schedule` parameters: skip `skip_first` steps, then
    cycles of `wait` idle, `warmup` warm-up and `active` recorded steps, `repeat`
    cycles (0: cycles go on until the phase ends); `skip_first_wait` non-zero: the first
    cycle starts without its `wait`."""

    wait: int = 0
    warmup: int = 1
    active: int = 3
    repeat: int = 1
    skip_first: int = 0
    skip_first_wait: int = 0

    def __post_init__(self) -> None:
        for name in ("wait", "warmup", "repeat", "skip_first", "skip_first_wait"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"schedule: {name} must be an integer >= 0, not {value!r}")
        if not isinstance(self.active, int) or self.active < 1:
            raise ValueError(f"schedule: active must be an integer >= 1, not {self.active!r}")

    @property
    def cycle(self) -> int:
        """Steps in one cycle: wait + warmup + active."""
        return self.wait + self.warmup + self.active

    def action(self, step: int) -> str:
        """What the profiler does during step `step` (0-based), as torch decides it."""
        if step < 0:
            raise ValueError("schedule: a step is >= 0")
        if step < self.skip_first:
            return NONE
        step -= self.skip_first
        if self.skip_first_wait:
            step += self.wait
        if self.repeat > 0 and step // self.cycle >= self.repeat:
            return NONE
        within = step % self.cycle
        if within < self.wait:
            return NONE
        if within < self.wait + self.warmup:
            return WARMUP
        return RECORD if within < self.cycle - 1 else RECORD_AND_SAVE

    def cycles(self, steps: Optional[int] = None) -> List[Tuple[int, int, int]]:
        """The cycles as (first warm-up step, first recorded step, last recorded step),
        in order: all of them when `repeat` > 0, else those starting before `steps`
        (`steps` is needed when `repeat` is 0)."""
        if self.repeat == 0 and steps is None:
            raise ValueError("schedule: repeat=0 repeats forever; give the number of steps")
        out = []
        k = 0
        while self.repeat == 0 or k < self.repeat:
            start = self.skip_first + k * self.cycle + (0 if self.skip_first_wait else self.wait)
            if steps is not None and start >= steps:
                break
            first_active = start + self.warmup
            out.append((start, first_active, first_active + self.active - 1))
            k += 1
        return out

    def recorded_steps(self, steps: int) -> List[int]:
        """The steps among 0..steps-1 whose events are recorded and saved: those of a
        cycle whose last active step is reached (a cycle cut by the phase's end is saved
        too, by the profiler's stop)."""
        return [k for k in range(steps) if self.action(k) in (RECORD, RECORD_AND_SAVE)]

    def describe(self) -> str:
        """The parameters as one line."""
        extra = f" skip_first_wait={self.skip_first_wait}" if self.skip_first_wait else ""
        return (
            f"skip_first={self.skip_first} wait={self.wait} warmup={self.warmup} "
            f"active={self.active} repeat={self.repeat}{extra}"
        )

    def plan_lines(self, steps: Optional[int] = None) -> List[str]:
        """The plan, one line per cycle: `cycle 1: steps 4–6 ACTIVE (warm-up 3)`.
        With `repeat` 0 and no `steps`, the first cycle and the period."""
        lines = [self.describe()]
        if self.repeat == 0 and steps is None:
            ((warm, first, last),) = self.cycles(self.skip_first + self.cycle)
            lines.append(f"cycle 1: {_active(first, last)}{_warm(warm, first)}")
            lines.append(f"then every {self.cycle} steps while the phase runs (repeat=0)")
            return lines
        for n, (warm, first, last) in enumerate(self.cycles(steps), start=1):
            cut = ""
            if steps is not None and last >= steps:
                cut = f" (cut at step {steps - 1}: the phase has {steps} steps)"
            lines.append(f"cycle {n}: {_active(first, last)}{_warm(warm, first)}{cut}")
        if len(lines) == 1:
            lines.append(f"no step is recorded in {steps} steps")
        return lines


def _active(first: int, last: int) -> str:
    return f"step {first} ACTIVE" if first == last else f"steps {first}\u2013{last} ACTIVE"


def _warm(warm: int, first: int) -> str:
    if warm == first:
        return ""
    return (
        f" (warm-up step {warm})"
        if first - warm == 1
        else f" (warm-up steps {warm}\u2013{first - 1})"
    )
