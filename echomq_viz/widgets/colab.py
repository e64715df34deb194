"""The one call a notebook makes for Google Colab: its widget manager on.

Colab draws third-party widgets (every view here is an anywidget) only once
its custom widget manager is on, in each notebook; elsewhere there is
nothing to do. So every notebook's first code cell is one line,
``from echomq_viz import colab_setup; colab_setup()``, which does nothing,
and prints nothing, outside Colab (nbval compares no output). Installing
the package in Colab is said once, in notebook 00 and docs/install.md.
"""

from __future__ import annotations

import sys

__all__ = ["colab_setup"]


def colab_setup() -> None:
    """In Google Colab, turn on its widget manager; anywhere else, nothing."""
    if "google.colab" not in sys.modules:
        return
    from google.colab import output

    output.enable_custom_widget_manager()
