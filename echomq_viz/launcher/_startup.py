"""Our Jupyter processes start without building a grammar nobody uses.

jsonschema makes its ``iri`` and ``iri-reference`` format checkers when it
is imported, from rfc3987-syntax where that is installed (the
``format-nongpl`` extra that nbformat and jupyter_events ask for). That
package builds 39 Earley parsers with Lark as it loads: 1.1 to 1.9
CPU-seconds in every JupyterLab, Voila, hub, export and refresh process.
No Jupyter schema uses either format.

:func:`skip_iri_grammar`, called before anything imports jsonschema, marks
rfc3987-syntax absent for this process: jsonschema then leaves those two
formats unchecked, as it does wherever that extra is not installed (the
formats are optional in JSON Schema). It changes nothing once jsonschema is
loaded, and nothing in any other process.

The test processes skip it too: pytest loads this module as a plugin
(``-p echomq_viz.launcher._startup`` in the project's pytest options) before
the plugins installed beside it, one of which (nbval) imports nbformat.
"""

from __future__ import annotations

import sys

__all__ = ["skip_iri_grammar", "pytest_addhooks"]


def skip_iri_grammar() -> None:
    """Before jsonschema is imported: import rfc3987_syntax as missing (``None`` in ``sys.modules``)."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def pytest_addhooks(pluginmanager: object) -> None:
    """pytest calls this as it registers the module (``-p``), before it loads the installed plugins."""
    skip_iri_grammar()
