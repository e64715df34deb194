"""The kernel of each ``echomq-viz app`` visitor: ipykernel without its debugger.

ipykernel loads debugpy at start whenever it is installed, about 8 MB of
each kernel's memory; a Voila page has no debugger to use it. The app's
kernel spec (``voila_template/kernels/python3/kernel.json``, found first on
the app's ``JUPYTER_PATH``) starts this module instead of ipykernel's own
launcher. That spec also turns off ipywidgets' echo of every change a page
sends (``JUPYTER_WIDGETS_ECHO=0``): a page has its kernel to itself, and the
echo was one message in seven per slider move, each read, checked and
relayed by the server; the page applies the kernel's own updates either way.
And it keeps no IPython history (``--HistoryManager.enabled=False``): no
database and no thread saving the cells a page runs.
"""

from __future__ import annotations

import sys


def main() -> None:
    sys.modules["debugpy"] = None  # its import fails: ipykernel runs without a debugger
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
