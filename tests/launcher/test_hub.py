"""A course on a real JupyterHub, and the Zero to JupyterHub set-up on paper.

``TestCourseOnAHub`` starts one real JupyterHub (PyPI ``jupyterhub``, npm
``configurable-http-proxy``) on loopback in a temporary folder, with
``DummyAuthenticator`` and ``SimpleLocalProcessSpawner`` (no system users),
its spawner running ``echomq-viz singleuser`` (benchmarks/hub.py's ``Hub``).
Three students: alice on a private Redis of her own (no ``REDIS_URL``),
carol and dave on one shared Redis with a password (``REDIS_URL`` set for them
by the hub's ``pre_spawn_hook``). Through the hub's REST API their servers are
started; each student logs in through the hub's proxy and, in headless
Chromium, opens notebook 01 in JupyterLab and, separately, as a Voila page,
moves the hero's priority slider to a value of their own and switches "live
on Redis" on: the page must show that student's score, stored by Redis.
Then: the shared Redis holds every shared student's jobs in queues of their
own and nothing of the private students; an edited notebook survives a
restart of its server; and when the hub stops, no process and no key is left.

The config checks read ``deploy/jupyterhub/config.yaml`` (PyYAML) and check
that what it names exists: the image build, the start command, the variable.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
import redis
import yaml
from packaging.requirements import Requirement

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

from echomq_viz.launcher import cli, lab_settings, notebook_copies
from echomq_viz.launcher.hub import SINGLEUSER_MODULE
from echomq_viz.redis_side.server import ENV_URL, RedisServer
from test_browser import (  # noqa: F401  (browser: a fixture)
    LAB_IDLE_JS, _error_free, _need_npm_once, _wait_views_rendered, browser, ran_all_js, settle, shot_on_failure,
    wait_for_page, wait_until,
)

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "jupyterhub"
NOTEBOOK = "01-one-score-two-keys.ipynb"
TIER_SPAN = 2**32


def _load_benchmark():
    spec = importlib.util.spec_from_file_location("hub_bench", ROOT / "benchmarks" / "hub.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hub_bench = _load_benchmark()

PRIVATE = ("alice",)  # one suffices: a private Redis is no one else's; sharing takes two
SHARED = ("carol", "dave")
# The keys that bring each student's priority slider to a value no other
# student picks, and none the notebook's own cells add live jobs at.
PRIORITY_KEYS = {"alice": ("Home",), "carol": ("End", "ArrowLeft", "ArrowLeft"), "dave": ("End",)}
PRIORITY = {"alice": 1, "carol": 4, "dave": 6}


# -- the hub ------------------------------------------------------------------------------------


@pytest.fixture(scope="class")
def shared_redis():
    """The course's shared Redis: loopback, a fresh password; thrown away at the end."""
    with RedisServer(port=0) as server:
        yield server


@pytest.fixture(scope="class")
def hub(shared_redis):
    """One hub, every student's server started through its REST API."""
    _need_npm_once("configurable-http-proxy")
    folder = Path(tempfile.mkdtemp(prefix="emqhub-"))  # short: unix sockets live below it
    try:
        with hub_bench.Hub(folder, shared_url=shared_redis.url, shared_users=SHARED) as running:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(running.start_server, (*PRIVATE, *SHARED)))
            yield running
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _home_copy(hub, name: str) -> Path:
    return hub.folder / "home" / name / cli.USER_FOLDER


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


# -- a student in the browser -----------------------------------------------------------------------


def _log_in(context, hub, name: str, next_path: str):
    """The hub's log-in page (any password: DummyAuthenticator), then ``next_path``."""
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{hub.url}/hub/login?next={next_path}")
    page.fill("#username_input", name)
    page.fill("#password_input", "any")
    page.click("#login_submit", no_wait_after=True)  # the students' pages load side by side
    return page


# The hero's readout and its live line, as the page draws them (widgets/page/hero.js)
READOUT = re.compile(r"score = ([\d,]+) × 0x100000000 \+ ([\d,]+)")
LIVE_LINE = re.compile(r"job (\S+) via addPrioritizedJob-9: Redis stored ([\d,]+), "
                       r"the page computed ([\d,]+): stored: (equal|DIFFERENT)")
HERO = ".emq-hero"  # the hero, drawn in the page


def _own_answer(page, name: str, where: str) -> None:
    """Move the hero's priority slider to this student's value, switch live
    on, and read back this student's own score, stored by Redis."""
    view = page.locator(HERO).first
    view.scroll_into_view_if_needed()
    settle(view)
    view.locator("input[type=range]").first.focus()
    for key in PRIORITY_KEYS[name]:
        page.keyboard.press(key)
    readout = READOUT

    def shown():
        found = readout.search(view.inner_text())
        return found and (int(found.group(1).replace(",", "")), int(found.group(2).replace(",", "")))

    wait_until(lambda: (s := shown()) and s[0] == PRIORITY[name], 30,
               lambda: f"{where} {name}: the readout shows {shown()}, not priority {PRIORITY[name]}")
    priority, counter = shown()
    settle(view)
    result = LIVE_LINE
    before = result.search(view.inner_text())  # the notebook's own last live result, if shown
    view.locator("input[type=checkbox]").click()  # "live on Redis: each change adds a job"
    found = wait_until(lambda: (m := result.search(view.inner_text())) and (before is None or m[0] != before[0]) and m,
                       30, lambda: f"{where} {name}: no new Redis result after switching live on")
    stored, computed = (int(found.group(n).replace(",", "")) for n in (2, 3))
    own = priority * TIER_SPAN + counter
    assert (stored, computed, found.group(4)) == (own, own, "equal"), \
        f"{where} {name}: {found.group(0)!r}, but this student's score is {own:,}"
    _error_free(page, f"{where} {name}")


def _shared_redis_keeps_students_apart(shared_redis) -> None:
    """Every queue on the shared Redis belongs to one kernel: the jobs a
    student added hold that student's priority only, and no private
    student's job is there at all."""
    client = shared_redis.client()
    students_in: dict[str, set[int]] = {}
    for key in client.scan_iter(match="emq:{viz-01-score@*}:prioritized"):
        queue = key[:-len(":prioritized")]
        names = [client.hget(f"{queue}:{job}", "name") for job in client.zrange(key, 0, -1)]
        # the student's own add from the hero view; the notebook's own cells add at priorities 3 and 5
        mine = {int(m.group(1)) for n in names if (m := re.fullmatch(r"hero-p(\d+)-c\d+", n or ""))}
        students_in[queue] = mine - {3, 5}
    client.close()
    assert students_in, "no demo queue on the shared Redis"
    assert all(len(found) <= 1 for found in students_in.values()), f"a queue holds two students' jobs: {students_in}"
    for name in SHARED:  # one queue in JupyterLab, one in Voila
        assert sum(PRIORITY[name] in found for found in students_in.values()) == 2, (name, students_in)
    for name in PRIVATE:
        assert not any(PRIORITY[name] in found for found in students_in.values()), (name, students_in)


@pytest.mark.slow
class TestCourseOnAHub:
    """One hub, three students, two Redis set-ups; the steps in order."""

    def test_each_server_has_the_notebooks_and_its_redis(self, hub, shared_redis):
        shipped = sorted(path.name for path in notebook_copies.shipped_notebooks().glob("*.ipynb"))
        for name in (*PRIVATE, *SHARED):
            assert sorted(p.name for p in _home_copy(hub, name).glob("*.ipynb")) == shipped, name
            processes = hub.student_processes(name)
            redis = [p for p in processes if "redis-server" in " ".join(p.cmdline())]
            server = next(p for p in processes if SINGLEUSER_MODULE in p.cmdline())
            url = server.environ().get(ENV_URL, "")
            if name in SHARED:
                assert url == shared_redis.url and not redis, f"{name} should use the shared Redis only"
            else:
                assert url.startswith("unix://") and len(redis) == 1, f"{name} should have a private Redis"
                assert str(hub.folder / "tmp") in url, url

    def test_a_students_token_opens_only_their_own_server(self, hub):
        alice, carol = hub.user_token("alice"), hub.user_token("carol")
        assert _get(f"{hub.server_url('alice')}/api/status", alice) == 200
        assert _get(f"{hub.server_url('carol')}/api/status", alice) == 403
        assert _get(f"{hub.server_url('alice')}/api/status", carol) == 403

    def test_students_see_their_own_answer_in_jupyterlab_and_voila(self, hub, shared_redis, browser):
        """All three at once, each in a browser of their own (a context):
        log in, JupyterLab and Run All, the slider; then the Voila page.
        Then the shared Redis holds the shared students' jobs apart."""
        contexts = {name: browser.new_context(viewport={"width": 1366, "height": 900})
                    for name in (*PRIVATE, *SHARED)}
        try:
            labs = {name: _log_in(context, hub, name, f"/user/{name}/lab/tree/{NOTEBOOK}")
                    for name, context in contexts.items()}
            for name, page in labs.items():  # every Run All started before any is waited for
                with shot_on_failure(page, f"hub-lab-{name}"):
                    wait_for_page(page, LAB_IDLE_JS, 120, f"JupyterLab {name}: the kernel never became idle")
                    page.locator(".lm-MenuBar-itemLabel:text-is('Run')").click()
                    page.locator(".lm-Menu-itemLabel:text-is('Run All Cells')").click()
            for name, page in labs.items():
                with shot_on_failure(page, f"hub-lab-{name}"):
                    wait_for_page(page, ran_all_js(), 180, f"JupyterLab {name}: Run All did not finish")
                    _wait_views_rendered(page, f"JupyterLab {name}")
                    _own_answer(page, name, "JupyterLab")
                    assert page.locator(".Toastify__toast").filter(has_text="news").count() == 0, "news toast"
            voilas = {}
            for name, context in contexts.items():  # every page asked for before any is waited for
                voilas[name] = context.new_page()
                voilas[name].set_default_timeout(60_000)
                voilas[name].goto(f"{hub.server_url(name)}/voila/render/{NOTEBOOK}", wait_until="commit",
                                  timeout=180_000)
            for name, page in voilas.items():
                with shot_on_failure(page, f"hub-voila-{name}"):
                    wait_until(lambda: page.evaluate(
                        """() => document.readyState === 'complete' && !document.getElementById('loading')
                             && !document.querySelector('script[type="application/vnd.voila.cell-output+json"]')"""),
                        180, f"Voila {name}: the page did not finish rendering")
                    handles = page.locator(f"{HERO} input[type=range]")
                    wait_until(lambda: handles.count() >= 2, 60, f"Voila {name}: the hero's sliders never showed")
                    _wait_views_rendered(page, f"Voila {name}")
                    assert all(handles.nth(i).get_attribute("aria-label")
                               for i in range(handles.count())), f"Voila {name}: the hero's sliders have no names"
                    _own_answer(page, name, "Voila")
        finally:
            for context in contexts.values():
                context.close()
        _shared_redis_keeps_students_apart(shared_redis)

    def test_a_students_edit_survives_a_restart(self, hub):
        copy = _home_copy(hub, "alice")
        edited, deleted = copy / "02-which-pops-first.ipynb", copy / "03-inside-the-consume.ipynb"
        notebook = json.loads(edited.read_text())
        notebook["cells"].append({"cell_type": "markdown", "id": "alices-note", "metadata": {},
                                  "source": "alice's own note"})
        edited.write_text(json.dumps(notebook))
        mine = edited.read_bytes()
        deleted.unlink()
        hub.stop_server("alice")
        hub.start_server("alice")
        assert edited.read_bytes() == mine, "the restart overwrote alice's edit"
        assert deleted.read_bytes() == (notebook_copies.shipped_notebooks() / deleted.name).read_bytes(), \
            "a notebook alice deleted did not come back"

    def test_stopping_the_hub_leaves_no_process_and_no_key(self, hub, shared_redis):
        hub.__exit__(None, None, None)
        assert hub.process.returncode is not None
        assert len(hub.seen) >= 4 * 3, f"too few processes were noted to mean anything: {hub.seen}"
        assert hub.leftovers == [], "left running after the hub stopped:\n" + "\n".join(hub.leftovers)
        client = shared_redis.client()
        try:
            assert client.dbsize() == 0, f"keys left on the shared Redis: {sorted(client.scan_iter())[:20]}"
        finally:
            client.close()
        assert shared_redis.password not in hub.log_path.read_text(errors="replace"), "the hub's log shows the password"
        left = sorted(path.name for path in (hub.folder / "tmp").iterdir())
        assert left == [], f"private Redis folders left: {left}"
        assert not [p for p in psutil.process_iter(["cmdline"]) if str(hub.folder) in " ".join(p.info["cmdline"] or ())]


def test_a_proxy_left_running_is_found_by_its_api_port(tmp_path):
    """The proxy runs in a session of its own: one the hub started after its family was noted
    is still this hub's, and the stop names and ends it."""
    hub = hub_bench.Hub(tmp_path)
    stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "configurable-http-proxy",
                              "--api-port", str(hub.proxy_api_port)])
    try:
        wait_until(hub._proxies, 10, "the stray proxy was not found")
        assert [line.split()[0] for line in hub._proxies()] == [str(stray.pid)]
        assert hub_bench.Hub(tmp_path)._proxies() == []  # another hub's port: not this one's
    finally:
        stray.kill()
        stray.wait()
    assert hub._proxies() == []


# -- Zero to JupyterHub, on paper --------------------------------------------------------------------


@pytest.fixture(scope="module")
def z2jh() -> dict:
    return yaml.safe_load((DEPLOY / "config.yaml").read_text(encoding="utf-8"))


def _build_command() -> list[str]:
    """The repo2docker command of build-image.sh, its ``$IMAGE`` filled in from the default there."""
    script = (DEPLOY / "build-image.sh").read_text(encoding="utf-8")
    image = re.search(r'^IMAGE="\$\{IMAGE:-([^}]+)\}"$', script, re.M)
    line = re.search(r"^jupyter-repo2docker .*$", script, re.M)
    assert image and line, "build-image.sh: no IMAGE default or no jupyter-repo2docker line"
    return shlex.split(line.group(0).replace('"$IMAGE"', image.group(1)))


def test_the_image_is_the_one_build_image_sh_builds_with_options_repo2docker_knows(z2jh):
    command = _build_command()
    image = z2jh["singleuser"]["image"]
    assert command[command.index("--image-name") + 1] == f"{image['name']}:{image['tag']}"
    r2d = Path(sys.executable).with_name("jupyter-repo2docker")
    known = subprocess.run([str(r2d), "--help"], capture_output=True, text=True, timeout=60).stdout
    for option in (part for part in command if part.startswith("--")):
        assert re.search(rf"\[{re.escape(option)}[\] ]", known), f"repo2docker has no {option}"
    # repo2docker builds environment.yml, whose pip line installs this repository with the hub extra
    target = command[command.index("--target-repo-dir") + 1]
    assert not target.startswith("/home/"), "the repository would hide under the students' home volume"
    environment = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip = next(entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    installed = re.fullmatch(r"-e \.\[(\w+)\]", pip[0])
    assert installed, pip
    assert any(req.startswith("jupyterhub") for req in extras["hub"])
    assert installed.group(1) == "hub" or any(
        "hub" in requirement.extras
        for requirement in map(Requirement, extras[installed.group(1)]) if requirement.name == "echomq-viz")


def test_the_start_command_is_echomq_viz_singleuser(z2jh):
    command = z2jh["singleuser"]["cmd"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert command[0] in scripts and scripts[command[0]] == "echomq_viz.launcher._entry:main"
    args, extra = cli.build_parser().parse_known_args(command[1:])
    assert (args.command, extra) == ("singleuser", [])
    default = z2jh["singleuser"]["defaultUrl"]
    assert default.startswith("/lab/tree/") and (ROOT / "notebooks" / default.removeprefix("/lab/tree/")).is_file()


def test_only_the_hub_holds_the_operators_url_from_an_optional_secret(z2jh):
    assert ENV_URL not in z2jh["singleuser"].get("extraEnv", {}), "a student's server must never get the operator's URL"
    ref = z2jh["hub"]["extraEnv"]["ECHOMQ_VIZ_OPERATOR_URL"]["valueFrom"]["secretKeyRef"]
    assert ref["optional"] is True, "without the Secret, students must get a private Redis, not a failed start"
    secret = yaml.safe_load((DEPLOY / "redis-secret.yaml").read_text(encoding="utf-8"))
    assert (secret["kind"], secret["metadata"]["name"]) == ("Secret", ref["name"])
    assert re.fullmatch(r"redis://:CHANGE-ME@[\w.-]+:\d+/\d+", secret["stringData"][ref["key"]])
    port = int(secret["stringData"][ref["key"]].rsplit(":", 1)[1].split("/")[0])
    for part in ("singleuser", "hub"):
        assert z2jh[part]["networkPolicy"]["egress"][0]["ports"][0]["port"] == port, part


def _pre_spawn_hook(z2jh, monkeypatch, operator_url: str | None):
    """config.yaml's hub.extraConfig run as the hub runs it; its pre_spawn_hook."""
    from traitlets.config import Config

    if operator_url is None:
        monkeypatch.delenv("ECHOMQ_VIZ_OPERATOR_URL", raising=False)
    else:
        monkeypatch.setenv("ECHOMQ_VIZ_OPERATOR_URL", operator_url)
    c = Config()
    for code in z2jh["hub"]["extraConfig"].values():
        exec(compile(code, "hub.extraConfig", "exec"), {"c": c})
    return c.Spawner.pre_spawn_hook


def test_the_hubs_pre_spawn_hook_gives_each_student_a_redis_user_of_their_own(z2jh, monkeypatch, shared_redis):
    from types import SimpleNamespace

    from echomq_viz.redis_side.server import connect

    hook = _pre_spawn_hook(z2jh, monkeypatch, shared_redis.url)
    spawners = {name: SimpleNamespace(user=SimpleNamespace(name=name), environment={"KEEP": "1"})
                for name in ("carol", "dave")}
    for spawner in spawners.values():
        hook(spawner)
    urls = {name: spawner.environment[ENV_URL] for name, spawner in spawners.items()}
    assert all(spawner.environment["KEEP"] == "1" for spawner in spawners.values())
    assert shared_redis.password not in "".join(urls.values()) and urls["carol"] != urls["dave"]
    carol = connect(urls["carol"])
    assert carol.execute_command("ACL", "WHOAMI") == "carol"
    operator = shared_redis.client()
    operator.set("emq:{viz-01-score@dave.0badc0de}:pc", "1")  # a key of dave's
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            carol.get("emq:{viz-01-score@dave.0badc0de}:pc")
    finally:
        operator.delete("emq:{viz-01-score@dave.0badc0de}:pc")
        carol.close()
        for name in spawners:
            operator.acl_deluser(name)
        operator.close()


def test_without_the_secret_the_hook_leaves_the_student_a_private_redis(z2jh, monkeypatch):
    from types import SimpleNamespace

    hook = _pre_spawn_hook(z2jh, monkeypatch, None)
    spawner = SimpleNamespace(user=SimpleNamespace(name="erin"), environment={})
    hook(spawner)
    assert spawner.environment == {}


def test_resources_are_guarantees_below_limits(z2jh):
    units = {"K": 1e3, "M": 1e6, "G": 1e9}
    size = lambda text: float(text[:-1]) * units[text[-1]]  # noqa: E731
    cpu, memory = z2jh["singleuser"]["cpu"], z2jh["singleuser"]["memory"]
    assert 0 < cpu["guarantee"] <= cpu["limit"]
    assert 0 < size(memory["guarantee"]) <= size(memory["limit"])


def test_the_hub_page_gives_the_start_command_of_config_yaml(z2jh):
    page = (ROOT / "docs" / "jupyterhub.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- singleuser-command -->\n```bash\n(.+)\n```", page)
    assert shown, "docs/jupyterhub.md: no singleuser-command block"
    assert shlex.split(shown.group(1)) == z2jh["singleuser"]["cmd"]


# -- echomq-viz singleuser, without a hub -------------------------------------------------------------


def test_singleuser_copies_into_the_home_and_keeps_edits(tmp_path, monkeypatch):
    from echomq_viz.launcher.hub import student_notebooks

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(ROOT)  # a checkout: lab would use its notebooks/; a student's server never does
    said: list[str] = []
    copy = student_notebooks(None, say=said.append)
    assert copy == tmp_path / cli.USER_FOLDER
    shipped = notebook_copies.shipped_notebooks()
    assert sorted(p.name for p in copy.glob("*.ipynb")) == sorted(p.name for p in shipped.glob("*.ipynb"))
    (copy / NOTEBOOK).write_text("my own version")
    (copy / "02-which-pops-first.ipynb").unlink()
    assert student_notebooks(None, say=said.append) == copy
    assert (copy / NOTEBOOK).read_text() == "my own version"
    assert (copy / "02-which-pops-first.ipynb").read_bytes() == (shipped / "02-which-pops-first.ipynb").read_bytes()
    assert "copied 1," in said[-1]


def test_singleuser_runs_jupyterhub_singleuser_on_the_copy_with_the_spawners_options_last(tmp_path):
    from echomq_viz.launcher.hub import singleuser_argv

    argv = singleuser_argv(tmp_path, ["--debug", "--ServerApp.root_dir=/elsewhere"])
    assert argv[:3] == [sys.executable, "-m", SINGLEUSER_MODULE]
    assert importlib.util.find_spec(SINGLEUSER_MODULE) is not None
    assert f"--ServerApp.root_dir={tmp_path}" in argv and "--VoilaConfiguration.template=echomq-viz" in argv
    assert "--MappingKernelManager.cull_idle_timeout=600" in argv  # a closed page's kernel goes
    assert argv[-2:] == ["--debug", "--ServerApp.root_dir=/elsewhere"]  # the operator's options win


def test_singleuser_env_puts_the_template_and_a_quiet_lab_first(tmp_path, monkeypatch):
    from echomq_viz.launcher.app_template import TEMPLATE_ROOT
    from echomq_viz.launcher.hub import singleuser_env

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", "/operators/config")
    monkeypatch.delenv("JUPYTER_PATH", raising=False)
    env = singleuser_env(tmp_path)
    assert env["JUPYTER_PATH"] == str(TEMPLATE_ROOT)
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(tmp_path), "/operators/config"]
    page_config = json.loads((tmp_path / "labconfig" / "page_config.json").read_text())
    assert page_config["disabledExtensions"] == {plugin: True for plugin in lab_settings.LAB_DISABLED_PLUGINS}
    assert (page_config["buildCheck"], page_config["buildAvailable"]) == (False, False)
