"""jupyterhub-singleuser as ``echomq-viz singleuser`` runs it: the same
server, started without rfc3987-syntax's unused grammar (see
:mod:`echomq_viz.launcher._startup`), which a class whose students all
start at once would otherwise build once per student."""

from __future__ import annotations

from echomq_viz.launcher._startup import skip_iri_grammar

__all__: list[str] = []


def main() -> None:
    skip_iri_grammar()
    from jupyterhub.singleuser import main as singleuser_main

    singleuser_main()


if __name__ == "__main__":
    main()
