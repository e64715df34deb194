"""The Lua scripts ship inside the wheel: install it into a fresh venv and run them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

from echomq_viz.server import RedisServer

ROOT = Path(__file__).resolve().parents[1]

IN_FRESH_VENV = textwrap.dedent(
    """
    import json, sys
    import echomq_viz
    from echomq_viz.keys import QueueContext
    from echomq_viz.lua_loader import LUA_DIR, load_scripts
    from echomq_viz.scripts import Scripts
    from echomq_viz.server import connect

    site = sys.argv[1]
    assert echomq_viz.__file__.startswith(site), echomq_viz.__file__
    assert str(LUA_DIR).startswith(site), LUA_DIR
    scripts = Scripts(connect(sys.argv[2]))
    ctx = QueueContext("wheel-check")
    scripts.reset(ctx)
    loaded = {name: scripts.client.script_load(s.source) for name, s in scripts.sources.items()}
    scripts.add_prioritized_job(ctx, "late", {}, 2)
    scripts.add_prioritized_job(ctx, "early", {}, 1)
    order = [scripts.move_to_active(ctx, "t").name for _ in range(2)]
    scripts.reset(ctx)
    print(json.dumps({"scripts": sorted(loaded), "order": order}))
    """
)


def test_wheel_carries_the_lua_and_runs_it(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(ROOT)],
        check=True,
    )
    (wheel,) = tmp_path.glob("echomq_viz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "echomq_viz/lua/addPrioritizedJob-9.lua" in names
    assert "echomq_viz/lua/includes/getPriorityScore.lua" in names

    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # The package itself without its notebook dependencies; the two the
    # scripts need come from the index as usual.
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", wheel], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "redis", "numpy"], check=True)
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    with RedisServer() as server:
        out = subprocess.run(
            [python, "-c", IN_FRESH_VENV, site, server.url],
            check=True, capture_output=True, text=True, cwd=tmp_path,
        ).stdout
    assert '"order": ["early", "late"]' in out
    expected = sorted(p.name.split("-")[0] for p in (ROOT / "lua").glob("*.lua"))
    assert f'"scripts": {expected}'.replace("'", '"') in out
