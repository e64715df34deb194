"""The export's JavaScript cache, packed once, then unpacked from disk; and
the kernel a notebook runs in, on Unix sockets in a folder of its own.

The offline pages themselves are opened in a real browser in
``test_page_views.py`` (``TestOnTheOfflinePage``, with ``test_browser.check_offline_page``);
here a local tarball stands in for
``npm pack``, so nothing needs the network.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from echomq_viz.launcher.export import JsAsset, fetch_js_assets

ASSET = JsAsset("demo-widgets-1.0.0", (("package/dist/*.js", "demo"),))
FILES = {"package/dist/a.js": b"var a = 1;\n", "package/dist/b.js": b"var b = 2;\n", "package/README.md": b"no"}


def packed(cache: Path) -> Path:
    """The asset's folder in ``cache`` holding a tarball, as ``npm pack`` leaves it."""
    folder = cache / "js" / ASSET.spec
    folder.mkdir(parents=True)
    with tarfile.open(folder / f"{ASSET.spec}.tgz", "w:gz") as archive:
        for name, data in FILES.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return folder


def test_a_packed_tarball_is_unpacked_once_and_read_from_the_cache(tmp_path):
    folder = packed(tmp_path)
    found = fetch_js_assets(tmp_path, assets=(ASSET,))
    assert {name: path.read_bytes() for name, path in found.items()} == {
        "demo/a.js": b"var a = 1;\n", "demo/b.js": b"var b = 2;\n"}
    assert all(path.is_relative_to(folder / "files") for path in found.values())

    (folder / f"{ASSET.spec}.tgz").unlink()  # no tarball, no npm: the unpacked files serve
    assert fetch_js_assets(tmp_path, assets=(ASSET,)) == found


def test_a_second_fetch_waits_for_the_one_in_progress(tmp_path):
    """Two exports at once share the cache: while one holds the asset's
    folder, the other neither reads half-unpacked files nor unpacks over them."""
    folder = packed(tmp_path)
    results: list[dict[str, Path]] = []
    with open(folder / ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a first fetch holds it
        second = threading.Thread(target=lambda: results.append(fetch_js_assets(tmp_path, assets=(ASSET,))))
        second.start()
        second.join(0.5)
        assert second.is_alive() and not results, "the second fetch did not wait"
        assert not (folder / "files").exists(), "the second fetch unpacked while the first held the folder"
    second.join(10)
    assert not second.is_alive()
    assert sorted(results[0]) == ["demo/a.js", "demo/b.js"]


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_the_exports_kernel_is_on_unix_sockets_in_a_folder_of_its_own(tmp_path):
    """The notebook's kernel says where its connection file is and what it
    holds; the folder is its own, 0700, and gone once the run is over."""
    import nbformat

    from echomq_viz.launcher.export import execute_with_widgets

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import json, os, ipykernel\n"
        "path = ipykernel.get_connection_file()\n"
        "print(json.dumps({'path': path, 'mode': os.stat(os.path.dirname(path)).st_mode & 0o777,\n"
        "                  'transport': json.load(open(path))['transport']}))")])
    execute_with_widgets(nb, tmp_path / "seen.ipynb", timeout=60)
    seen = json.loads(nb.cells[0].outputs[0]["text"])
    assert seen["transport"] == "ipc"
    assert seen["mode"] == 0o700
    assert Path(seen["path"]).parent.name.startswith("echomq-viz-kernel-")
    assert not Path(seen["path"]).parent.exists()


def test_offline_pages_read_like_the_app_and_link_no_other_host():
    """The app's page style (a reading column, monospace listings, single-spaced captions) in every
    offline page's template, which names no other host (MathJax's CDN comes from nbconvert, and
    only for a notebook with maths)."""
    from echomq_viz.launcher import export
    from echomq_viz.launcher.app_template import TEMPLATE, TEMPLATE_ROOT

    style = (TEMPLATE_ROOT / "voila" / "templates" / TEMPLATE / "app-page.css").read_text(encoding="utf-8")
    assert style.strip() in export._TEMPLATE
    assert "max-width: var(--emq-measure)" in export._TEMPLATE
    assert "http://" not in export._TEMPLATE and "https://" not in export._TEMPLATE


def test_the_offline_front_page_links_every_page_in_path_order(tmp_path):
    from echomq_viz.launcher.app_index import write_offline_index

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    names = sorted(path.name for path in notebooks.glob("*.ipynb"))
    page = write_offline_index(notebooks, names, tmp_path).read_text(encoding="utf-8")
    links = [page.index(f'href="{Path(name).stem}.html"') for name in names]
    assert links == sorted(links) and page.count('class="emq-card"') == len(names)
    assert "snapshot" in page and "voila/render" not in page
    assert "http://" not in page and "https://" not in page and "<script" not in page


@pytest.mark.parametrize("out, why", [("/dev/null/x", "Not a directory"), ("/proc/echomq-viz-pages", None)])
def test_an_out_folder_that_cannot_be_is_one_line_before_anything_is_fetched_or_run(tmp_path, out, why):
    """``export --out /dev/null/x`` was a traceback (NotADirectoryError) after fetching the scripts."""
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "export", "--out", out, "--cache", str(tmp_path / "c")],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    line = done.stderr.strip()
    assert done.stderr.splitlines() == [line] and line.startswith(f"echomq-viz export: cannot write the pages into {out}: ")
    assert line.endswith("give --out a folder you can write in") and (why is None or why in line)
    assert os.listdir(tmp_path) == []  # nothing fetched, no kernel started


@pytest.mark.parametrize("content, why", [(b"not json", "NotJSONError"), (b'{"cells": 5}', "TypeError"),
                                          (bytes(range(256)) * 2, "")])
def test_a_file_that_is_no_notebook_is_one_line_before_anything_is_written(tmp_path, content, why):
    """``export bad.ipynb`` was a traceback, after the scripts were copied into --out."""
    bad = tmp_path / "bad.ipynb"
    bad.write_bytes(content)
    out = tmp_path / "pages"
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "echomq_viz", "export", "--no-execute", "--out", str(out),
                           "--cache", str(tmp_path / "c"), str(bad)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == "", done
    line = done.stderr.strip()
    assert done.stderr.splitlines() == [line] and "Traceback" not in line
    assert line.startswith("echomq-viz export: bad.ipynb is not a notebook that can be read: ") and why in line
    assert not out.exists() and not (tmp_path / "c").exists()  # nothing written, nothing fetched
