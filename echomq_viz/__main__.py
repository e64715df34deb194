"""``python -m echomq_viz``: the same as the ``echomq-viz`` command."""

import sys

from .cli import main

sys.exit(main())
