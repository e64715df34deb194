"""``python -m echomq_viz``: the same as the ``echomq-viz`` command."""

import sys

from echomq_viz.launcher._entry import main

sys.exit(main())
