"""The notebooks on one shared Redis: two kernels running the same notebook at
the same time each work on demo queues of their own, print exactly the stored
outputs, and leave no demo key behind when they end."""

from __future__ import annotations

import asyncio
import configparser
import contextlib
import difflib
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from echomq_viz.launcher._kernel_channels import private_kernel_config
from echomq_viz.redis_side.server import ENV_URL, RedisServer

ROOT = Path(__file__).resolve().parents[1]
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
# The notebooks whose demo queues collided when run twice at once: their
# printed ids, counters and pop orders depend on owning the queue alone.
SHARED = ["01-one-score-two-keys", "03-inside-the-consume", "05-where-exactness-ends", "10-the-queues-people-run"]


def sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regex/replace pairs nbval applies, read from the same file."""
    config = configparser.ConfigParser(interpolation=None)
    config.read(SANITIZE, encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


def printed(nb, rules) -> list[list[str]]:
    """Per code cell, what a reader sees as text: streams, plain reprs, errors."""
    def clean(text: str) -> str:
        for pattern, replacement in rules:
            text = pattern.sub(replacement, text)
        return text

    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":  # one stream may arrive in one piece or several
                if texts and texts[-1].startswith(output.name + ": "):
                    texts[-1] += output.text
                else:
                    texts.append(output.name + ": " + output.text)
            elif output.output_type == "error":
                texts.append(f"error: {output.ename}: {output.evalue}")
            elif "text/plain" in output.get("data", {}):
                texts.append("repr: " + output.data["text/plain"])
        cells.append([clean(text) for text in texts])
    return cells


def same_as_stored(got: list[list[str]], stored: list[list[str]], kernel: str) -> None:
    """Fails naming the first code cell whose text differs, with the lines that differ (a run of
    notebook 10 prints hundreds of lines in one cell: pytest's own diff cuts them off)."""
    for index, (cell, stored_cell) in enumerate(zip(got, stored)):
        if cell != stored_cell:
            diff = difflib.unified_diff("\n".join(stored_cell).splitlines(), "\n".join(cell).splitlines(),
                                        "stored", f"the {kernel} kernel", lineterm="", n=2)
            pytest.fail(f"code cell {index}: the {kernel} kernel printed other text than the stored\n"
                        + "\n".join(diff), pytrace=False)
    assert len(got) == len(stored), (len(got), len(stored))


@pytest.fixture
def shared_redis(monkeypatch):
    """One private server that both kernels reach through REDIS_URL."""
    server = RedisServer().start()
    monkeypatch.setenv(ENV_URL, server.url)
    yield server
    server.stop()


async def _run_at_once(path: Path, workdir: Path, copies: int) -> list:
    notebooks = [nbformat.read(path, as_version=4) for _ in range(copies)]
    with contextlib.ExitStack() as folders:  # a kernel's channels on Unix sockets in a folder of its own
        clients = [NotebookClient(nb, timeout=180, kernel_name="python3",
                                  resources={"metadata": {"path": str(workdir)}},
                                  config=folders.enter_context(private_kernel_config())) for nb in notebooks]
        await asyncio.gather(*(client.async_execute() for client in clients))
    return notebooks


@pytest.mark.slow
@pytest.mark.parametrize("name", SHARED)
def test_two_kernels_running_one_notebook_at_once_print_the_stored_outputs(name, shared_redis, tmp_path):
    path = ROOT / "notebooks" / f"{name}.ipynb"
    rules = sanitizers()
    stored = printed(nbformat.read(path, as_version=4), rules)
    assert any(stored), "the stored notebook prints nothing: nothing would be compared"
    first, second = asyncio.run(_run_at_once(path, tmp_path, 2))
    same_as_stored(printed(first, rules), stored, "first")
    same_as_stored(printed(second, rules), stored, "second")
    # Both kernels have ended: their atexit took their demo keys and leases along.
    left = sorted(shared_redis.client().scan_iter(match="emq:{viz-*", count=1000))
    assert left == [], left[:10]
