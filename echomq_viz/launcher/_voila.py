"""Voila as ``echomq-viz app`` runs it: with its binary-frame reader bounded,
the ``echomq-viz`` template, Voila's ``lab`` one with a name for every
slider handle (ipywidgets gives noUiSlider's handles none), with
``--public``'s token (see :mod:`echomq_viz.launcher.exposure`), and with less work per
kernel message (:mod:`echomq_viz.launcher._app_server`).

Voila 0.5 reads the header of every binary message it sends to a page as if
the frame used the v1 websocket protocol: the first 8 bytes are taken as a
count of offsets, and a list that long is built. A client that connects
without the v1 subprotocol gets the legacy framing, whose first 8 bytes are
an arbitrary number (about 10**18 for the image frames the ipympl figures
sent on each slider move): one such visitor blocks the server's event loop,
and with it every other visitor, until memory runs out. Here the count is checked against the
frame's length first; anything that is not a plausible v1 frame has no
header to read, which is what Voila's own reader answers for a bad frame.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from echomq_viz.launcher._startup import skip_iri_grammar
from echomq_viz.launcher.app_template import TEMPLATE, TEMPLATE_ROOT
from echomq_viz.launcher.exposure import token_options

__all__: list[str] = []

_OFFSET = 8  # bytes per offset in a v1 frame


def read_v1_header(frame: bytes) -> dict[str, Any] | None:
    """The header of a v1 websocket frame, or None when ``frame`` is not one."""
    if len(frame) < _OFFSET:
        return None
    count = int.from_bytes(frame[:_OFFSET], "little")
    # v1: count, then ``count`` offsets (channel, header, parent, metadata, content, buffers...)
    if not 3 <= count <= len(frame) // _OFFSET - 1:
        return None
    offsets = [int.from_bytes(frame[_OFFSET * (i + 1):_OFFSET * (i + 2)], "little") for i in range(3)]
    try:
        return json.loads(frame[offsets[1]:offsets[2]].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def main() -> None:
    skip_iri_grammar()
    paths = [str(TEMPLATE_ROOT), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(paths)  # before Voila reads its template paths
    if not any(arg.startswith(("--template", "--VoilaConfiguration.template=")) for arg in sys.argv[1:]):
        sys.argv.append(f"--template={TEMPLATE}")
    if not any(arg.startswith("--VoilaConfiguration.multi_kernel_manager_class") for arg in sys.argv[1:]):
        sys.argv.append("--VoilaConfiguration.multi_kernel_manager_class=echomq_viz.launcher._app_server.AppKernelManager")
    sys.argv += token_options("--Voila.token")  # echomq-viz app --public: in here, not on the exec'd command line

    import voila.app
    from voila.tornado import kernel_websocket_handler

    from echomq_viz.launcher._app_server import AppVoila, PageWebsocketHandler, SeatedVoilaHandler, TemplateFileHandler

    kernel_websocket_handler.read_header_from_binary_message = read_v1_header
    voila.app.TornadoVoilaHandler = SeatedVoilaHandler  # a page starts a kernel only while a seat is free
    voila.app.VoilaKernelWebsocketHandler = PageWebsocketHandler  # a page's messages keep its seat
    voila.app.TemplateStaticFileHandler = TemplateFileHandler  # a path that is no static file: 404
    AppVoila.launch_instance()


if __name__ == "__main__":
    main()
