"""JupyterLab as ``echomq-viz lab`` runs it: ``python -m jupyterlab`` without
a false deprecation warning, with ``--public``'s token (see
:mod:`echomq_viz.launcher.exposure`), the shipped notebooks trusted (see
:mod:`echomq_viz.launcher.trust`), and no line in the terminal a user cannot act on.

notebook_shim reads every ServerApp trait while it links, the deprecated
``ServerApp.token`` too, which then warns that it is deprecated though nobody
set it. Python hides such warnings from library code, but Voila's package,
imported as a server extension, turns traitlets' DeprecationWarnings back on.
So Voila is imported here first, its warning filters undone, and that one
warning ignored.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from pathlib import Path

from echomq_viz.launcher._startup import skip_iri_grammar
from echomq_viz.launcher.exposure import token_options

__all__: list[str] = []

FALSE_WARNING = "ServerApp.token config is deprecated"
# Lines nobody can act on: the launcher stops everything on one Ctrl-C and says so itself (not
# "twice to skip confirmation"); jupyter_lsp names every language server it did not find;
# tornado 6.5 warns, at the first kernel connection, that jupyter_server's default ping timeout
# (three intervals) is longer than its interval, then uses the interval, as it always did; and
# jupyter_server reports its message buffering and protocol adaptation for every page; and it
# calls the launcher's stop "critical" ("received signal 15, stopping"), which the launcher has
# just announced itself.
UNACTIONABLE = (
    "Use Control-C to stop this server",
    "received signal ",
    "%s | extension was successfully ",  # a dozen lines at every start, about its own plumbing
    "JupyterLab extension loaded from ",
    "JupyterLab application directory is ",
    "Extension Manager is ",
    "Skipped non-installed server(s)",
    "The websocket_ping_timeout (",
    "Starting buffering for ",
    "Adapting from protocol version ",
)


class Unactionable(logging.Filter):
    """Drops the records of :data:`UNACTIONABLE`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(UNACTIONABLE)


def quiet_logs() -> None:
    """Filter :data:`UNACTIONABLE` out of the loggers that write them (ServerApp's, LabApp's, tornado's)."""
    for name in ("ServerApp", "LabApp", "tornado.general"):
        logging.getLogger(name).addFilter(Unactionable())


def root_dir(argv: list[str]) -> Path | None:
    """The folder ``--ServerApp.root_dir=`` names in ``argv``, if any."""
    for arg in argv:
        if arg.startswith("--ServerApp.root_dir="):
            return Path(arg.split("=", 1)[1])
    return None


def trust(argv: list[str]) -> None:
    from echomq_viz.launcher.notebook_copies import shipped_notebooks
    from echomq_viz.launcher.trust import trust_shipped

    folder = root_dir(argv)
    with contextlib.suppress(SystemExit):  # an installation without notebooks: nothing to trust
        if folder is not None:
            trust_shipped(folder, shipped_notebooks(),
                          say=lambda line: print(f"echomq-viz: {line}", file=sys.stderr, flush=True))


def main() -> None:
    skip_iri_grammar()
    from jupyterlab.labapp import main as lab_main

    with warnings.catch_warnings(), contextlib.suppress(ImportError):  # the filters as they were, after
        warnings.simplefilter("ignore", DeprecationWarning)
        import voila  # noqa: F401
    warnings.filterwarnings("ignore", FALSE_WARNING, DeprecationWarning)
    quiet_logs()
    trust(sys.argv[1:])
    sys.argv += token_options("--IdentityProvider.token")  # lab --public: in here, not on the exec'd command line
    sys.exit(lab_main())


if __name__ == "__main__":
    main()
