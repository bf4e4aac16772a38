"""CUDA memory snapshots for `kinetoscope.capture`: the allocator's history recorded
during a phase (`torch.cuda.memory._record_memory_history`), dumped at the phase's end
and, through torch's out-of-memory observer, when an allocation fails. Every function
here is a no-op without CUDA; the caller says so in a progress line."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Callable, Optional

# The one observer torch keeps per process calls whichever dumper is current.
_OOM_DUMPER: Optional[Callable[[int, int, int, int], None]] = None
_OOM_ATTACHED = False


def cuda_ready(torch) -> bool:
    """Whether CUDA can be used by this process."""
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a broken driver reads as no CUDA
        return False


def start_history(torch, max_entries: int) -> Optional[str]:
    """Start recording allocator events with their stacks, keeping at most
    `max_entries`; `None` when started, else why not."""
    record = getattr(torch.cuda.memory, "_record_memory_history", None)
    if record is None:
        return "this torch has no torch.cuda.memory._record_memory_history"
    attempts = (
        # the history of the phase only (clear_history: torch 2.6 and later)
        lambda: record(enabled="all", max_entries=max_entries, clear_history=True),
        lambda: record(enabled="all", max_entries=max_entries),
        # torch 2.0 spells it record(True, trace_alloc_max_entries=...)
        lambda: record(True, trace_alloc_max_entries=max_entries, trace_alloc_record_context=True),
    )
    for attempt in attempts[:-1]:
        try:
            attempt()
            return None
        except TypeError:
            continue
    attempts[-1]()
    return None


def stop_history(torch) -> None:
    """Stop recording allocator events."""
    record = getattr(torch.cuda.memory, "_record_memory_history", None)
    if record is None:
        return
    try:
        record(enabled=None)
    except TypeError:
        record(False)


def dump_snapshot(torch, path: Path) -> None:
    """Write the allocator's state and history to `path` (a pickle `kinetoscope memory`
    reads)."""
    dump = getattr(torch.cuda.memory, "_dump_snapshot", None)
    if dump is not None:
        dump(str(path))
        return
    with open(path, "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)


def set_oom_dumper(torch, dumper: Optional[Callable[[int, int, int, int], None]]) -> Optional[str]:
    """Make `dumper(device, alloc, device_alloc, device_free)` the function called when a
    CUDA allocation fails (`None`: nothing). torch cannot detach an observer, so one is
    attached per process, once, and calls the current dumper. Returns why it cannot be
    attached, or `None`."""
    global _OOM_DUMPER, _OOM_ATTACHED
    _OOM_DUMPER = dumper
    if _OOM_ATTACHED or dumper is None:
        return None
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if attach is None:
        return "this torch has no torch._C._cuda_attach_out_of_memory_observer"
    attach(_on_oom)
    _OOM_ATTACHED = True
    return None


def _on_oom(device: int, alloc: int, device_alloc: int, device_free: int) -> None:
    dumper = _OOM_DUMPER
    if dumper is not None:
        dumper(device, alloc, device_alloc, device_free)
