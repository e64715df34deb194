"""What notebook 10's RQ and huey workers import: :mod:`echomq_viz.peers.worker_apps`."""

from __future__ import annotations

import subprocess
import sys


def test_the_job_module_leaves_numpy_and_the_demo_unimported():
    """RQ's worker forks a process for each job, and that process imports the job's module (and so
    the ``echomq_viz.peers`` package): numpy and the experiments there cost about 0.1 CPU-s a job."""
    code = ("import sys, echomq_viz.peers.worker_apps; "
            "print(sorted(m for m in ('numpy', 'matplotlib', 'ipywidgets', 'echomq_viz.experiments.live', "
            "'echomq_viz.core.score') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
