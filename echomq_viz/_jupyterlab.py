"""JupyterLab as ``echomq-viz lab`` runs it: ``python -m jupyterlab`` without
a false deprecation warning, and with ``--public``'s token (see
:mod:`echomq_viz.exposure`).

notebook_shim reads every ServerApp trait while it links, the deprecated
``ServerApp.token`` too, which then warns that it is deprecated though nobody
set it. Python hides such warnings from library code, but Voila's package,
imported as a server extension, turns traitlets' DeprecationWarnings back on.
So Voila is imported here first, its warning filters undone, and that one
warning ignored.
"""

from __future__ import annotations

import contextlib
import sys
import warnings

from .exposure import token_options

__all__: list[str] = []

FALSE_WARNING = "ServerApp.token config is deprecated"


def main() -> None:
    from jupyterlab.labapp import main as lab_main

    with warnings.catch_warnings(), contextlib.suppress(ImportError):  # the filters as they were, after
        warnings.simplefilter("ignore", DeprecationWarning)
        import voila  # noqa: F401
    warnings.filterwarnings("ignore", FALSE_WARNING, DeprecationWarning)
    sys.argv += token_options("--IdentityProvider.token")  # lab --public: in here, not on the exec'd command line
    sys.exit(lab_main())


if __name__ == "__main__":
    main()
