"""JupyterLab's settings as ``echomq-viz lab`` and a hub's ``singleuser``
run it: no news toast, no news fetched, no update check, no build check, and
the user's own settings left alone (a run's page config comes first on
``JUPYTER_CONFIG_PATH``); and kernel websockets with Nagle's algorithm off
(:mod:`.kernel_websocket`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["LAB_DISABLED_PLUGINS", "LAB_NO_BUILD", "LAB_NO_DELAY", "LAB_QUIET", "quiet_lab_config_path"]

# No "Would you like to get notified about official Jupyter news?" toast, no
# news fetched, no update check.
LAB_DISABLED_PLUGINS = ("@jupyterlab/apputils-extension:announcements",)
# No build check: every extension here comes prebuilt in its wheel, so there is never anything to
# build, and each page load's check costs the server half a second of CPU (it reads every
# extension's metadata and runs `yarn config`). Nor the "Build" prompt that goes with it.
LAB_NO_BUILD = {"buildCheck": False, "buildAvailable": False}
LAB_QUIET = (
    "--LabApp.news_url=None",
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
)


# A kernel's answer is several small frames: with Nagle on, each after the first may wait 40 ms
# (kernel_websocket.py says why). A name, not an import: the command line stays light.
LAB_NO_DELAY = "--ServerApp.kernel_websocket_connection_class=echomq_viz.launcher.kernel_websocket.NoDelayConnection"


def quiet_lab_config_path(run_dir: Path) -> str:
    """``JUPYTER_CONFIG_PATH`` with ``run_dir`` (a run's own folder) first,
    where a page config switches JupyterLab's news and update announcements
    and its build check off, leaving the user's own settings alone."""
    labconfig = run_dir / "labconfig"
    labconfig.mkdir(exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {plugin: True for plugin in LAB_DISABLED_PLUGINS}, **LAB_NO_BUILD}),
        encoding="utf-8")
    return os.pathsep.join([str(run_dir), *filter(None, os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep))])
