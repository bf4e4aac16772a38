"""The ``kinetoscope`` command (``python -m kinetoscope``, or the console script)."""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from . import _native


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return its exit status."""
    args = ["kinetoscope", *(sys.argv[1:] if argv is None else argv)]
    # The native command writes to the process's file descriptors: Python's buffers first.
    sys.stdout.flush()
    sys.stderr.flush()
    return _native.main(args)


if __name__ == "__main__":
    sys.exit(main())
