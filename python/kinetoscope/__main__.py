"""The ``kinetoscope`` command (``python -m kinetoscope``, or the console script)."""

from __future__ import annotations

import signal
import sys
import threading
from typing import Optional, Sequence

from . import _native


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return its exit status."""
    args = ["kinetoscope", *(sys.argv[1:] if argv is None else argv)]
    # The native command writes to the process's file descriptors: Python's buffers first.
    sys.stdout.flush()
    sys.stderr.flush()
    # Python only notes a Ctrl-C for its own code to check, which never runs while the
    # command does (`kinetoscope serve` would not stop): interrupt as the binary is.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _native.main(args)


if __name__ == "__main__":
    sys.exit(main())
