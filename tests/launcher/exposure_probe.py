"""Run by tests/launcher/test_exposure.py inside a network namespace of its own, whose
only non-loopback address the test gave it: asks ``echomq-viz lab|app`` to
listen there, without and with ``--public``, and prints what happened as JSON.

Usage: python exposure_probe.py MODE NOTEBOOKS_DIR PORT
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run outside pytest: tests/ holds processes.py
from processes import stop_group  # noqa: E402

LAUNCHER = [sys.executable, "-m", "echomq_viz"]


def non_loopback_address() -> str:
    for addresses in psutil.net_if_addrs().values():
        for entry in addresses:
            if entry.family == socket.AF_INET and not ipaddress.ip_address(entry.address).is_loopback:
                return entry.address
    raise SystemExit("no non-loopback address in this namespace")


def status(url: str) -> str:
    """The HTTP status of GET ``url`` (and where it redirects to: not followed)."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=10) as response:
            return str(response.status)
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {exc.headers.get('Location') or ''}".strip()


def loopback_only(mode: str, notebooks: str, port: int, address: str, env: dict, config: Path) -> dict:
    """Run without --ip, the config files asking for every interface: does
    it serve 127.0.0.1 and not ``address``?"""
    proc = subprocess.Popen([*LAUNCHER, mode, "--no-browser", "--notebooks", notebooks, "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            cwd=config)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            return {"served": False}
        try:
            socket.create_connection((address, port), timeout=2).close()
            elsewhere = True
        except OSError:
            elsewhere = False
        return {"served": True, "elsewhere": elsewhere}
    finally:
        stop_group(proc)


def main() -> None:
    mode, notebooks, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    address = non_loopback_address()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "JUPYTER_TOKEN")}
    env["TMPDIR"] = tempfile.mkdtemp(prefix="emq-x-")
    # Config files that would listen everywhere and switch the token off: the launcher must win over them.
    config = Path(tempfile.mkdtemp(prefix="emq-c-"))
    (config / "jupyter_server_config.json").write_text(json.dumps({"IdentityProvider": {"token": ""},
                                                                  "ServerApp": {"ip": "0.0.0.0"}}))
    (config / "voila.json").write_text(json.dumps({"Voila": {"token": "", "ip": "0.0.0.0"}}))
    env["JUPYTER_CONFIG_DIR"] = str(config)
    common = [mode, "--no-browser", "--notebooks", notebooks, "--port", str(port), f"--ip={address}"]
    result: dict = {"address": address}

    refused = subprocess.run([*LAUNCHER, *common], env=env, capture_output=True, text=True, timeout=120,
                             cwd=config)
    result["refused"] = {"code": refused.returncode, "stderr": refused.stderr, "stdout": refused.stdout,
                         "tmp_left": sorted(os.listdir(env["TMPDIR"]))}

    log = Path(env["TMPDIR"]) / "launcher.log"
    with open(log, "w") as handle:
        proc = subprocess.Popen([*LAUNCHER, *common, "--public"], env=env, stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=config)  # Voila reads a voila.json there too
    try:
        page = "lab" if mode == "lab" else ""
        base = f"http://{address}:{port}/{page}"
        deadline = time.monotonic() + 90
        links = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"links with the token are in (\S+)", log.read_text())
            if found and links is None:
                links = Path(found.group(1))
            try:
                without = status(base)
                break
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        else:
            raise SystemExit(f"echomq-viz {mode} --public did not serve:\n{log.read_text()[-3000:]}")
        link_lines = links.read_text().split() if links else []
        result["public"] = {
            "without_token": without,
            "wrong_token": status(f"{base}?token=not-the-token"),
            "links_mode": oct(links.stat().st_mode & 0o777) if links else None,
            "links": link_lines,
            "with_token": status(link_lines[0]) if link_lines else None,
            "token_on_a_command_line": any(
                link_lines and link_lines[0].partition("?token=")[2] in " ".join(p.info["cmdline"] or ())
                for p in psutil.process_iter(["cmdline"])),
        }
    finally:
        result["public"]["code"] = stop_group(proc)
    result["public"]["log"] = log.read_text()
    result["pinned"] = loopback_only(mode, notebooks, port, address, env, config)
    for folder in (env["TMPDIR"], config):
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
