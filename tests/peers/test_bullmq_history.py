"""Notebook 10's history of BullMQ's priority score, checked against the published npm packages.

The markdown cell "BullMQ's score, then and now" says: bullmq 3.16.2 still kept Bull's list and
``LINSERT``; 4.0.0 moved prioritized jobs to a sorted set scored
``priority * 0x100000000 + bit.band(prioCounter, 0xffffffffffff)`` and its ``Job`` refused
priorities above 2²¹; the counter taken ``% 0x100000000`` came later, first released in 5.8.1.
Each test packs the versions it needs (``npm pack``, no install scripts; once, into the
echomq-viz cache, after which no network is needed), reads the shipped sources out of the
tarball with :mod:`tarfile`, and checks the exact construct -- and that the cell still names that
version and construct, so the test fails when either the prose or the package says otherwise.
PR #2597 is not in the tarballs (they ship no changelog); only the release it names is checked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
from functools import cache
from pathlib import Path

import pytest

try:  # the cache helpers move into a subpackage; either home works
    from echomq_viz.peers.npm import cache_root, one_process_at_a_time
except ImportError:
    from echomq_viz.launcher.export import cache_root, one_process_at_a_time

pytestmark = pytest.mark.slow  # npm pack needs the network the first time

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "10-the-queues-people-run.ipynb"
HEADING = "### BullMQ's score, then and now"
ADD_WITH_PRIORITY = "commands/includes/addJobWithPriority.lua"
BIT_BAND_SCORE = "local score = priority * 0x100000000 + bit.band(prioCounter, 0xffffffffffff)"
MODULO_SCORE = "local score = priority * 0x100000000 + prioCounter % 0x100000000"
LINSERT = 'rcall("LINSERT", targetKey, "BEFORE", id, jobId)'
ZADD_PRIORITIZED = 'rcall("ZADD", prioritizedKey, score, jobId)'


@cache
def prose() -> str:
    """The cell's text with its line breaks and runs of spaces made single spaces."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    found = [cell for cell in cells if cell["cell_type"] == "markdown"
             and "".join(cell["source"]).lstrip().startswith(HEADING)]
    assert len(found) == 1, f"{NOTEBOOK.name}: expected one markdown cell headed {HEADING!r}, found {len(found)}"
    return re.sub(r"\s+", " ", "".join(found[0]["source"]))


def says(*phrases: str) -> None:
    text = prose()
    for phrase in phrases:
        assert phrase in text, f"notebook 10's history cell no longer says {phrase!r}"


def _tarball(version: str) -> Path:
    """``bullmq-<version>.tgz``, packed into the cache once."""
    folder = cache_root() / "bullmq-history" / version
    with one_process_at_a_time(folder):
        tarball = folder / f"bullmq-{version}.tgz"
        if tarball.is_file():
            return tarball
        npm = shutil.which("npm")
        if npm is None:
            message = f"npm is needed to pack bullmq@{version} for notebook 10's history (not cached in {folder})"
            if os.environ.get("CI") or os.environ.get("ECHOMQ_VIZ_REQUIRE_BROWSER") == "1":  # .ci/run sets the latter
                pytest.fail(message)
            pytest.skip(message)
        partial = folder / "packing"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        result = subprocess.run([npm, "pack", f"bullmq@{version}", "--ignore-scripts", "--pack-destination",
                                 str(partial)], capture_output=True, text=True, check=False, timeout=300)
        if result.returncode != 0:
            tail = " | ".join((result.stderr or result.stdout).strip().splitlines()[-3:])
            pytest.fail(f"npm pack bullmq@{version} failed: {tail}")
        (partial / tarball.name).replace(tarball)  # whole or absent: a killed pack leaves no tarball
        shutil.rmtree(partial, ignore_errors=True)
        return tarball


@cache
def shipped(version: str) -> dict[str, str]:
    """The package's Lua sources and ``classes/job.js`` files: path in the tarball -> text."""
    texts = {}
    with tarfile.open(_tarball(version), "r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and (member.name.endswith(".lua") or member.name.endswith("/classes/job.js")
                                    or member.name == "package/package.json"):
                texts[member.name] = archive.extractfile(member).read().decode("utf-8")
    manifest = json.loads(texts.pop("package/package.json"))
    assert (manifest["name"], manifest["version"]) == ("bullmq", version), (manifest["name"], manifest["version"])
    return texts


def copies(version: str, suffix: str) -> dict[str, str]:
    """Every shipped copy of a file (``dist/cjs`` and ``dist/esm``, or ``src``); at least one."""
    found = {name: text for name, text in shipped(version).items() if name.endswith("/" + suffix)}
    assert found, f"bullmq {version} ships no {suffix}; its files: {sorted(shipped(version))[:8]} ..."
    return found


def lua(version: str) -> dict[str, str]:
    return {name: text for name, text in shipped(version).items() if name.endswith(".lua")}


def test_3_16_2_kept_prioritized_jobs_in_the_list_with_linsert():
    says("[3.16.2](https://github.com/taskforcesh/bullmq/blob/v3.16.2/src/commands/includes/addJobWithPriority.lua)",
         "still kept Bull's list and `LINSERT`")
    for name, text in copies("3.16.2", ADD_WITH_PRIORITY).items():
        assert LINSERT in text, name
        assert "prioCounter" not in text and "0x100000000" not in text, name
    # no script of 3.16.2 keeps a priority counter or scores jobs by priority * 2^32
    assert not [name for name, text in lua("3.16.2").items()
                if "0x100000000" in text or "prioCounter" in text or "prioritizedKey" in text]


def test_4_0_0_scored_a_sorted_set_with_bit_band():
    says("[4.0.0](https://github.com/taskforcesh/bullmq/blob/v4.0.0/src/commands/includes/addJobWithPriority.lua)",
         "moved prioritized jobs to a sorted set scored "
         "`priority * 0x100000000 + bit.band(prioCounter, 0xffffffffffff)`")
    for name, text in copies("4.0.0", ADD_WITH_PRIORITY).items():
        assert BIT_BAND_SCORE in text, name
        assert ZADD_PRIORITIZED in text, name
        assert "LINSERT" not in text, name
    assert not [name for name, text in lua("4.0.0").items() if "LINSERT" in text]


def test_4_0_0_job_refused_priorities_above_2_21():
    says("and its `Job` refused priorities above 2²¹")
    for name, text in copies("4.0.0", "classes/job.js").items():
        assert re.search(r"if \(this\.opts\.priority > 2 \*\* 21\) \{\s*throw new Error\(`Priority should be "
                         r"between 0 and \$\{priorityLimit\}`\)", text), name
        assert "const priorityLimit = 2 ** 21;" in text, name


def test_modulo_counter_first_released_in_5_8_1():
    says("the counter taken `% 0x100000000` came later",
         "([#2597](https://github.com/taskforcesh/bullmq/pull/2597), first released in 5.8.1)")
    for name, text in copies("5.8.0", ADD_WITH_PRIORITY).items():  # the release before 5.8.1
        assert BIT_BAND_SCORE in text, name
        assert "prioCounter %" not in text, name
    for name, text in copies("5.8.1", ADD_WITH_PRIORITY).items():
        assert MODULO_SCORE in text, name
        assert "bit.band" not in text, name
        assert ZADD_PRIORITIZED in text, name
