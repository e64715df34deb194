"""``echomq-viz singleuser``: a student's server on a JupyterHub.

A hub's spawner runs this command where it would run ``jupyterhub-singleuser``
(Zero to JupyterHub: ``singleuser.cmd``). It

- copies the shipped notebooks into ``echomq-viz-notebooks/`` in the
  student's home (``$HOME``), as ``echomq-viz lab`` does: the
  first start copies them all, later starts only what is missing or never
  edited, so a student's edits survive every restart;
- starts a private Redis for this student's kernels, unless ``REDIS_URL`` is
  set (one shared Redis for the course, as the student's own Redis user,
  :mod:`echomq_viz.redis_side.acl`, made by the hub's ``pre_spawn_hook``; the demo keys
  this student's dead kernels left there are removed once at start);
- runs ``jupyterhub-singleuser`` on that folder: JupyterLab at
  ``/user/<name>/lab``, every notebook as a Voila page at
  ``/user/<name>/voila/render/<notebook>``; kernels with no page open are
  stopped after 10 idle minutes. Options it does not know go to
  jupyterhub-singleuser, so the spawner's own arguments still work.

When the hub stops the server (SIGINT, then SIGTERM), the server shuts its
kernels down, then anything it left is ended, then the private Redis:
nothing outlives it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from echomq_viz.launcher._kernel_channels import ipc_options, runtime_dir
from echomq_viz.launcher.app_template import TEMPLATE, TEMPLATE_ROOT
from echomq_viz.launcher.lab_settings import LAB_NO_DELAY, LAB_QUIET, quiet_lab_config_path
from echomq_viz.launcher.notebook_copies import USER_FOLDER, copy_notebooks, notebooks_dir, shipped_notebooks

__all__ = ["singleuser_argv", "singleuser_env", "student_notebooks"]

SINGLEUSER_MODULE = "echomq_viz.launcher._singleuser"  # jupyterhub.singleuser, as ``jupyterhub-singleuser`` runs it
# A closed Voila page or notebook leaves its kernel running; under a pod's memory limit a few
# reloads would add up. Kernels with no page connected are stopped after 10 idle minutes.
KERNEL_CULLING = (
    "--MappingKernelManager.cull_idle_timeout=600",
    "--MappingKernelManager.cull_interval=60",
)


def student_notebooks(chosen: str | None, *, say: Callable[[str], None]) -> Path:
    """``chosen``, else the student's own copy of the shipped notebooks in
    their home (always a copy, even when the package runs from a checkout: on
    a hub, the checkout is the image's, the home is the student's volume)."""
    if chosen is not None:
        return notebooks_dir(chosen)
    return copy_notebooks(shipped_notebooks(), Path.home() / USER_FOLDER, say=say)


def singleuser_argv(root: Path, extra: Sequence[str]) -> list[str]:
    """jupyterhub-singleuser on ``root``, Voila pages in the echomq-viz
    template (named slider handles), then the spawner's own options."""
    argv = [sys.executable, "-m", SINGLEUSER_MODULE, f"--ServerApp.root_dir={root}", *LAB_QUIET, LAB_NO_DELAY,
            *KERNEL_CULLING, f"--VoilaConfiguration.template={TEMPLATE}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI machines often run as root
    return [*argv, *ipc_options(runtime_dir()), *extra]


def singleuser_env(run_dir: Path) -> dict[str, str]:
    """What the server gets besides ``REDIS_URL``: the echomq-viz Voila
    template on its path, and ``run_dir`` (this run's own folder) first on
    its config path, switching JupyterLab's news announcements off there."""
    paths = [str(TEMPLATE_ROOT), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    return {"JUPYTER_PATH": os.pathsep.join(paths), "JUPYTER_CONFIG_PATH": quiet_lab_config_path(run_dir)}
