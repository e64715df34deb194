"""The ``echomq-viz`` command's first step (and ``python -m echomq_viz``'s).

Python takes about a fifth of a second to import the command; a Ctrl-C then
came before any of the command's own stop handling and printed Python's
traceback. Here it ends in the line every stopped command ends with.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from echomq_viz.launcher.cli import main as command

        return command(argv)
    except KeyboardInterrupt:  # one the command did not take itself: what it started, its finally stopped
        print("echomq-viz: stopped", file=sys.stderr)
        return 128 + signal.SIGINT
