"""``lab`` and ``app`` listen on loopback unless ``--public``; with it they
require a token (:mod:`echomq_viz.launcher.exposure` and the launcher)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import psutil
import pytest

from echomq_viz.launcher import exposure
from echomq_viz.redis_side.server import free_tcp_port
from conftest import tiny_notebooks, wait_until
from test_browser import browser  # noqa: F401 (the module's Chromium fixture)

LAUNCHER = [sys.executable, "-m", "echomq_viz"]
PROBE = Path(__file__).with_name("exposure_probe.py")
# The address a namespace of the test's own gets beside loopback (TEST-NET-2: no real host has it).
NAMESPACE_ADDRESS = "198.51.100.7"


@pytest.mark.parametrize("extra, expected", [
    (["--ip=0.0.0.0"], [("--ip=0.0.0.0", "0.0.0.0")]),
    (["--ip", "::", "--theme=dark"], [("--ip ::", "::")]),
    (["--Voila.ip=10.1.2.3"], [("--Voila.ip=10.1.2.3", "10.1.2.3")]),
    (["--ServerApp.ip", "h", "--LabApp.ip="], [("--ServerApp.ip h", "h"), ("--LabApp.ip=", "")]),
    (["--ip"], [("--ip", "")]),
    (["--ipython-dir=x", "--Voila.ip_retries=1", "--theme=dark"], []),
])
def test_every_way_of_naming_an_address_is_found(extra, expected):
    assert exposure.requested_binds(extra) == expected


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.0.5", "::1", "[::1]", "localhost", "127.1", "2130706433",
                                     "::ffff:127.0.0.1"])
def test_loopback_in_any_spelling_stays_allowed(address):
    assert exposure.off_loopback(address) is None
    assert exposure.bind_refusal("app", [f"--Voila.ip={address}"], public=False) is None


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "[::]", "*", "", "0", "3221225986", "198.51.100.7",
                                     "fd00::2", "name-that-does-not-resolve.invalid"])
def test_anything_off_loopback_is_named(address):
    why = exposure.off_loopback(address)
    assert why and ("every interface" in why or "not a loopback address" in why or "does not resolve" in why)


def test_the_machines_own_addresses_are_off_loopback():
    own = [entry.address.split("%")[0] for entries in psutil.net_if_addrs().values() for entry in entries
           if entry.family in (socket.AF_INET, socket.AF_INET6)]
    off = [address for address in own if exposure.off_loopback(address)]
    assert all(exposure.off_loopback(address) is None for address in ("127.0.0.1", "::1"))
    assert all(not address.startswith("127.") and address != "::1" for address in off)


def test_only_an_address_not_given_is_pinned_to_loopback():
    assert exposure.pinned("--Voila.ip", ["--theme=dark"]) == ["--Voila.ip=127.0.0.1"]
    assert exposure.pinned("--Voila.ip", ["--Voila.ip=::1"]) == []  # traitlets refuses one option twice
    assert exposure.for_voila(["--ip=::1", "--ip", "x", "--ipython"]) == ["--Voila.ip=::1", "--Voila.ip", "x",
                                                                          "--ipython"]


def _launch(args: list[str], cwd: Path) -> tuple[int, str, str, list[str]]:
    """``echomq-viz ARGS`` in ``cwd`` with a TMPDIR of its own: (code, stdout, stderr, what it left there)."""
    tmp = cwd / "tmp"
    tmp.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "JUPYTER_TOKEN")}, "TMPDIR": str(tmp)}
    done = subprocess.run([*LAUNCHER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr, sorted(os.listdir(tmp))


@pytest.mark.parametrize("command, extra, named", [
    ("app", ["--Voila.ip=0.0.0.0"], "--Voila.ip=0.0.0.0"),
    ("app", ["--ip", "::"], "--ip ::"),
    ("app", ["--ServerApp.ip=3221225986"], "--ServerApp.ip=3221225986"),
    ("lab", ["--ip=0.0.0.0"], "--ip=0.0.0.0"),
    ("lab", ["--ServerApp.ip=*"], "--ServerApp.ip=*"),
    ("lab", ["--ip=name-that-does-not-resolve.invalid"], "--ip=name-that-does-not-resolve.invalid"),
])
def test_serving_beyond_loopback_without_public_is_one_line_and_nothing_starts(tmp_path, command, extra, named):
    # No --notebooks: a run that got further would copy the notebooks into tmp_path.
    code, out, err, left = _launch([command, "--no-browser", *extra], tmp_path)
    assert code == 2 and out == "", (out, err)
    assert err.splitlines() == [err.strip()] and named in err and "--public" in err, err
    assert left == [] and sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


def test_an_address_that_cannot_be_listened_on_is_named():
    assert exposure.listen_problem("name-that-does-not-resolve.invalid") == "the name does not resolve here"
    assert exposure.listen_problem("192.0.2.7") == "192.0.2.7 is not an address of this machine"  # TEST-NET-1
    for address in ("127.0.0.1", "localhost", "0.0.0.0", "", "*"):
        assert exposure.listen_problem(address) is None, address
    # once passed here, then a traceback from the server: it resolves no brackets, binds IPv6 only
    for address in ("[::1]", "[::1", "::1]"):
        assert exposure.listen_problem(address) == "an IPv6 address is written without brackets here (--ip=::1)"
    assert exposure.listen_problem("::ffff:127.0.0.1") == "::ffff:127.0.0.1 is an IPv4 address written as IPv6: give 127.0.0.1"


@pytest.mark.parametrize("command, extra, named, why", [
    ("app", ["--Voila.ip=name-that-does-not-resolve.invalid"], "--Voila.ip=name-that-does-not-resolve.invalid",
     "the name does not resolve here"),
    ("app", ["--Voila.ip=192.0.2.7"], "--Voila.ip=192.0.2.7", "192.0.2.7 is not an address of this machine"),
    ("lab", ["--ip", "192.0.2.7"], "--ip 192.0.2.7", "192.0.2.7 is not an address of this machine"),
    ("lab", ["--ip=[::1]"], "--ip=[::1]", "an IPv6 address is written without brackets here (--ip=::1)"),
    ("app", ["--Voila.ip=::ffff:127.0.0.1"], "--Voila.ip=::ffff:127.0.0.1",
     "::ffff:127.0.0.1 is an IPv4 address written as IPv6: give 127.0.0.1"),
])
def test_public_on_an_address_not_this_machines_is_one_line_and_nothing_starts(tmp_path, command, extra, named, why):
    """Once a traceback from deep in tornado, after Redis had started."""
    code, out, err, left = _launch([command, "--public", "--no-browser", *extra], tmp_path)
    assert code == 2 and out == "", (out, err)
    assert err.splitlines() == [f"echomq-viz {command}: {named} cannot be listened on: {why}; give an address of "
                                "this machine, or 0.0.0.0 for all of them (with --public)"], err
    assert left == [] and sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]


@pytest.mark.parametrize("extra, named", [
    (["--IdentityProvider.token="], "--IdentityProvider.token"),
    (["--Voila.token=abc"], "--Voila.token"),
    (["--Voila.auto_token=False"], "--Voila.auto_token"),
    (["--PasswordIdentityProvider.hashed_password=x"], "--PasswordIdentityProvider.hashed_password"),
    (["--port", "0"], "--port"),
])
def test_public_refuses_what_would_weaken_or_hide_its_token(tmp_path, extra, named):
    code, out, err, left = _launch(["app", "--public", "--no-browser", "--ip=0.0.0.0", *extra], tmp_path)
    assert code == 2 and out == "" and err.splitlines() == [err.strip()] and named in err, err
    assert left == []


def test_publication_keeps_the_token_in_files_only_you_can_read(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    publication = exposure.Publication.of("lab", ["--ip", "0.0.0.0"], 8888, tmp_path)
    said: list[str] = []
    env = publication.announce(said.append)
    assert env == {"ECHOMQ_VIZ_TOKEN_FILE": str(publication.token_file)}
    monkeypatch.setenv("ECHOMQ_VIZ_TOKEN_FILE", str(publication.token_file))
    assert exposure.token_options("--Voila.token") == [f"--Voila.token={publication.token}"]
    monkeypatch.delenv("ECHOMQ_VIZ_TOKEN_FILE")
    assert exposure.token_options("--Voila.token") == []
    assert publication.token_file.read_text() == publication.token and len(publication.token) >= 32
    links = publication.links_file.read_text().split()
    for path in (publication.token_file, publication.links_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert links and all(link.endswith(f":8888/lab?token={publication.token}") for link in links)
    assert not any("127.0.0.1" in link or "[::1]" in link for link in links)  # where visitors reach it
    assert len(said) == 2 and "WARNING" in said[0] and str(publication.links_file) in said[1]
    assert publication.token not in " ".join(said)
    monkeypatch.setenv("JUPYTER_TOKEN", "a-token-the-teacher-chose")
    (tmp_path / "second").mkdir()
    chosen = exposure.Publication.of("app", ["--Voila.ip=::1"], 8866, tmp_path / "second")
    assert chosen.links_file.read_text() == "http://[::1]:8866/?token=a-token-the-teacher-chose\n"


def _own_network_namespace() -> list[str]:
    """The command prefix that runs a program in a network namespace of its
    own whose loopback interface also carries NAMESPACE_ADDRESS: traffic to it
    never leaves that namespace."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare and ip (util-linux, iproute2) for a network namespace of the test's own")
    prefix = ["unshare", "--net", "--map-root-user", "sh", "-c",
              f'ip link set lo up && ip addr add {NAMESPACE_ADDRESS}/32 dev lo && exec "$@"', "sh"]
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("this machine allows no network namespace of the test's own (user namespaces are off)")
    return prefix


@pytest.mark.slow
@pytest.mark.parametrize("mode, port", [("app", 8866), ("lab", 8888)])
def test_a_non_loopback_address_is_refused_then_served_only_with_the_token(tmp_path, mode, port):
    notebooks = tiny_notebooks(tmp_path / "notebooks", "print(1)")
    done = subprocess.run([*_own_network_namespace(), sys.executable, str(PROBE), mode, str(notebooks), str(port)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["address"] == NAMESPACE_ADDRESS  # found by psutil.net_if_addrs, as any machine's would be
    refused = result["refused"]
    assert refused["code"] == 2 and refused["stdout"] == "" and refused["tmp_left"] == []
    assert refused["stderr"].splitlines() == [f"echomq-viz {mode}: --ip={NAMESPACE_ADDRESS} would serve the "
                                              f"notebooks to other hosts (not a loopback address); add --public "
                                              f"to do that (it then requires a token), or drop it to stay on "
                                              f"127.0.0.1"]
    public = result["public"]
    for attempt in (public["without_token"], public["wrong_token"]):  # a login page, never the notebooks
        assert attempt.startswith("403") or attempt.startswith("302 /login"), attempt
    # ... though a config file there sets an empty token, and no process shows the token in its command line.
    assert public["links_mode"] == "0o600" and public["with_token"] == "200", public
    assert public["token_on_a_command_line"] is False
    (link,) = public["links"]
    token = link.partition("?token=")[2]
    assert link.startswith(f"http://{NAMESPACE_ADDRESS}:{port}/") and len(token) >= 32
    log = public["log"]
    assert token not in log and log.count("WARNING: --public") == 1 and public["code"] == 0, log[-3000:]
    assert "deprecated" not in log.lower(), log  # JupyterLab's false ServerApp.token warning is gone
    # Without --ip it listens on loopback alone, though a config file asks for every interface.
    assert result["pinned"] == {"served": True, "elsewhere": False}


def test_a_local_server_gets_a_token_of_its_own_unless_one_was_chosen(tmp_path, monkeypatch):
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    made = exposure.own_token([], tmp_path)
    assert made is not None and stat.S_IMODE(made.stat().st_mode) == 0o600 and len(made.read_text()) >= 32
    for chosen in (["--IdentityProvider.token=mine"], ["--ServerApp.token="], ["--PasswordIdentityProvider.hashed_password=x"],
                   ["--Voila.token="], ["--token=x"]):
        assert exposure.own_token(chosen, tmp_path / "other") is None, chosen
    assert not (tmp_path / "other").exists()
    monkeypatch.setenv("JUPYTER_TOKEN", "mine")  # Voila ignores it: the file carries it to the server
    (tmp_path / "third").mkdir()
    assert exposure.own_token([], tmp_path / "third").read_text() == "mine"


def _token_named(line: str) -> str | None:
    """The token in the file a launcher's line names ("the token to log in with is in FILE (...)"),
    a file only its user may read; None for any other line."""
    if "the token to log in with is in " not in line:
        return None
    where = Path(line.split(" is in ", 1)[1].split(" (", 1)[0])
    assert stat.S_IMODE(where.stat().st_mode) == 0o600
    return where.read_text()


@pytest.mark.slow
def test_a_local_lab_never_prints_its_token_and_asks_for_it(tmp_path):
    """jupyter_server prints a token it made itself in full, twice, with its address: the lab
    gives it one from a 0600 file instead (shown as ``...``), and says where."""
    import urllib.error
    import urllib.request

    tmp = Path(tempfile.mkdtemp(prefix="emq-t-"))  # short: the private Redis's socket path must stay under 108 bytes
    env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "JUPYTER_TOKEN")}, "TMPDIR": str(tmp),
           "BROWSER": "true"}
    folder = tiny_notebooks(tmp_path / "notebooks", "1")
    lab = subprocess.Popen([*LAUNCHER, "lab", "--no-browser", "--notebooks", str(folder)],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           stdin=subprocess.DEVNULL, start_new_session=True)
    lines: list[str] = []
    token = port = None
    try:
        for line in lab.stdout:
            lines.append(line)
            token = _token_named(line) or token
            if (found := re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=", line)) is not None:
                port = int(found.group(1))
                break
        said = "".join(lines)
        assert token is not None and port is not None, said
        assert token not in said and f":{port}/lab?token=..." in said, said

        def status(query: str) -> int | None:
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status{query}", timeout=30).status
            except urllib.error.HTTPError as error:
                return error.code
            except urllib.error.URLError:
                return None  # not listening (yet): asked again

        assert wait_until(lambda: status(f"?token={token}") == 200, 30), said
        assert status("") == 403
    finally:
        lab.send_signal(2)
        rest = lab.communicate(timeout=60)[0]
        shutil.rmtree(tmp, ignore_errors=True)
    assert (token is None or token not in rest) and lab.returncode == 0, rest[-2000:]


@pytest.mark.slow
def test_a_local_app_never_prints_its_token_opens_the_browser_with_it_and_asks_for_it(tmp_path, browser):
    """Voila served every user of the machine on loopback, with no token. The app now has one from a
    0600 file (its address line shows ``?token=...``), says where it is, and opens the browser with it
    through a 0600 page in its own folder; a page opened so runs its widgets (the kernel's websocket
    logs in with the cookie); without the token, the notebooks are not served."""
    import http.client

    tmp = Path(tempfile.mkdtemp(prefix="emq-t-"))  # short: the private Redis's socket path must stay under 108 bytes
    opened = tmp_path / "opened"
    recorder = tmp_path / "browser.sh"
    recorder.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    recorder.chmod(0o700)
    env = {**{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "JUPYTER_TOKEN")}, "TMPDIR": str(tmp),
           "BROWSER": str(recorder)}
    folder = tiny_notebooks(tmp_path / "notebooks", "import ipywidgets\nipywidgets.IntSlider(value=7, description='seven')")
    port = free_tcp_port()
    app = subprocess.Popen([*LAUNCHER, "app", "--port", str(port), "--notebooks", str(folder)], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
                           start_new_session=True)
    lines: list[str] = []
    token = None
    watchdog = threading.Timer(120, os.killpg, (app.pid, 9))  # an app that never says its address: EOF, not a hang
    watchdog.start()
    try:
        for line in app.stdout:
            lines.append(line)
            token = _token_named(line) or token
            if f"http://127.0.0.1:{port}/?token=" in line:
                break
        watchdog.cancel()
        said = "".join(lines)
        assert token is not None and len(token) >= 32 and token not in said, said
        assert f"http://127.0.0.1:{port}/?token=..." in said, said

        def status(path: str) -> str:
            """The status and where it sends the browser (the redirect not followed)."""
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            try:
                connection.request("GET", path)
                response = connection.getresponse()
                return f"{response.status} {response.getheader('Location') or ''}"
            finally:
                connection.close()

        for path in ("/", "/voila/render/tiny.ipynb"):
            assert status(path).startswith(("403", "302 /login")), status(path)
        assert wait_until(opened.exists, 30), said
        page_file = Path(opened.read_text().strip().removeprefix("file://"))
        assert stat.S_IMODE(page_file.stat().st_mode) == 0o600 and f"/?token={token}" in page_file.read_text()
        page = browser.new_page()
        try:
            page.goto(page_file.as_uri())
            page.wait_for_url(f"http://127.0.0.1:{port}/**", timeout=30_000)
            page.goto(f"http://127.0.0.1:{port}/voila/render/tiny.ipynb", timeout=120_000)
            page.get_by_role("slider", name="seven").wait_for(timeout=60_000)  # drawn from the kernel's widget state
        finally:
            page.close()
    finally:
        os.killpg(app.pid, 2)
        rest = app.communicate(timeout=60)[0]
        shutil.rmtree(tmp, ignore_errors=True)
    assert (token is None or token not in rest) and app.returncode == 0, rest[-2000:]
    assert not page_file.exists()  # the run's folder, and the page in it, gone with the app
