"""Progress lines of `kinetoscope.capture` (`[PROFILER:phase] ...`, cyan on a terminal)
and the final line: the command that analyses a run folder, or that analysis run."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, List, Optional

CYAN = "\x1b[36m"
RESET = "\x1b[0m"


def use_colour(stream: IO[str], colour: Optional[bool]) -> bool:
    """Colour when asked (`colour=True`), never when refused (`False`); by default only
    on a terminal and when `NO_COLOR` is unset or empty (https://no-color.org)."""
    if colour is not None:
        return colour
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def printable(text: str) -> str:
    """`text` without raw control characters (shown as `\\x1b`), so a phase name or a
    path cannot move the cursor or recolour the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Progress:
    """Writes `[PROFILER:<phase>] <message>` lines to a stream."""

    def __init__(self, stream: Optional[IO[str]] = None, colour: Optional[bool] = None):
        self.stream = stream if stream is not None else sys.stderr
        self.colour = use_colour(self.stream, colour)
        self.lines: List[str] = []

    def say(self, phase: str, message: str) -> None:
        """One progress line (also kept, plain, in `lines`)."""
        tag = f"[PROFILER:{printable(phase)}]"
        plain = f"{tag} {printable(message)}"
        self.lines.append(plain)
        text = f"{CYAN}{tag}{RESET} {printable(message)}" if self.colour else plain
        print(text, file=self.stream, flush=True)


def kinetoscope_command() -> Optional[List[str]]:
    """How to run kinetoscope here: `$KINETOSCOPE_BIN`, else `kinetoscope` on PATH, else
    the Python package's native module when importable (`python -m kinetoscope`);
    `None` when none is."""
    explicit = os.environ.get("KINETOSCOPE_BIN")
    if explicit:
        return [explicit]
    on_path = shutil.which("kinetoscope")
    if on_path:
        return [on_path]
    try:
        if importlib.util.find_spec("kinetoscope._native") is not None:
            return [sys.executable, "-m", "kinetoscope"]
    except (ImportError, ValueError):
        pass
    return None


def report_command(run_dir: Path) -> str:
    """The command a user types to analyse `run_dir`."""
    return f"kinetoscope report {shlex.quote(str(run_dir))}"


def analyze(run_dir: Path, progress: Progress) -> Optional[int]:
    """Run `kinetoscope report run_dir` and return its exit code; `None` (and the
    command printed) when no kinetoscope can be found."""
    cmd = kinetoscope_command()
    if cmd is None:
        progress.say(
            "run", f"kinetoscope not found (PATH, KINETOSCOPE_BIN); run: {report_command(run_dir)}"
        )
        return None
    progress.say(
        "run", "analysing: " + " ".join(shlex.quote(c) for c in cmd + ["report", str(run_dir)])
    )
    progress.stream.flush()
    done = subprocess.run(cmd + ["report", str(run_dir)], check=False)
    return done.returncode
