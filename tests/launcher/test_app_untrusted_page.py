"""A page of ``echomq-viz app`` is untrusted: what a script sends on a
page's websocket, with no browser and no code (Voila refuses code), leaves
the kernel's memory and the Redis keys bounded, and each refused value is
one line in the view's status. A kernel culled with its demo keys still on
Redis (stopped, then killed after the shutdown's grace) has them removed
once its lease lapsed, on the app's private Redis as on a shared one, and
nobody else's go.

Every message goes over a real websocket to the app's real kernels
(:mod:`kernel_socket`)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import signal
import time
from pathlib import Path

import psutil
import pytest
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError
import redis

from echomq_viz.core.score import COUNTER_MASK
from echomq_viz.launcher._app_server import VISITOR_COOKIE
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets.bands import JOBS_MAX
from kernel_socket import KernelSocket, kernel_id_of
from test_cli import Launched

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
RSS_GROWTH_MAX_MB = 60  # what every crafted message together may add to a kernel (a 1 MiB message, parsed)


def _kernel(app: Launched, kernel_id: str) -> psutil.Process:
    for pid in app.family():
        try:
            process = psutil.Process(pid)
            if kernel_id in " ".join(process.cmdline()):
                return process
        except psutil.Error:
            continue
    raise AssertionError(f"no process for kernel {kernel_id}")


# Every page here comes from one browser session, as a student's tabs do: it holds at most its
# share of the class's seats, each new page giving back its stalest kernel. Pages of new visitors
# each kept a seat until the culler (10 to 15 s after the page left) freed it, and on a fast
# machine the module's 13 pages filled the class of 8: 503 "The class is full".
VISITOR = {"Cookie": f"{VISITOR_COOKIE}={secrets.token_urlsafe(16)}"}


def _open(app: Launched, notebook: str) -> tuple[str, psutil.Process]:
    page = app.request("GET", f"/voila/render/{notebook}", timeout=300, headers=VISITOR).decode()
    kernel_id = kernel_id_of(page)
    return kernel_id, _kernel(app, kernel_id)


def _refusal(state: dict, name: str) -> None:
    """The view's status is one line refusing ``name``."""
    status = state.get("status", "")
    assert re.match(rf"refused {name}[ :]", status) and "\n" not in status and len(status) < 200, state


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("untrusted")
    running = Launched("app", NOTEBOOKS, log=folder / "app.log", extra=("--max-kernels", "8"))
    yield running
    running.stop_and_check()
    log = (folder / "app.log").read_text()
    assert "Traceback" not in log, log[-3000:]


def test_values_past_their_bounds_are_refused_in_one_line_and_redis_stays_bounded(app):
    """Notebook 04's jobs raised past its maximum once made the kernel add 1,000,000 jobs."""
    kernel_id, kernel = _open(app, "04-tiers-as-bands.ipynb")
    before = kernel.memory_info().rss
    client = redis.Redis.from_url(app.redis_url)

    async def craft() -> None:
        page = await KernelSocket.open(app.port, kernel_id)
        comm, state = await page.find("jobs", "points", "tiers")
        for sent, name in (({"jobs": 1_000_000}, "jobs"), ({"jobs": 10**30}, "jobs"), ({"tiers": -1}, "tiers"),
                           ({"jobs": "5000"}, "jobs"), ({"start": COUNTER_MASK}, "start"),
                           ({"points": [[1, 1]] * 50_000}, "points"), ({"counts": [[1, 10**9]]}, "counts")):
            back = await page.update(comm, sent)
            _refusal(back, name)
            now = await page.state(comm)
            assert now[name] == state[name], (sent, now[name])  # left as the kernel had it
        back = await page.update(comm, {"jobs": JOBS_MAX, "tiers": 10**6})  # one good, one refused: the good one taken
        assert back["tiers"] == state["tiers"]  # the page told the kernel's value
        now = await page.state(comm)
        assert (now["jobs"], now["tiers"], len(now["points"])) == (JOBS_MAX, state["tiers"], JOBS_MAX)
        page.close()

    asyncio.run(craft())
    # the driven view's queue of at most JOBS_MAX jobs, the busy view's own of 200, and their keys
    assert client.dbsize() <= JOBS_MAX + 200 + 100, client.dbsize()
    assert (kernel.memory_info().rss - before) / 2**20 < RSS_GROWTH_MAX_MB


def test_a_message_past_the_pages_size_limit_closes_its_websocket_and_the_kernel_goes_on(app):
    kernel_id, kernel = _open(app, "04-tiers-as-bands.ipynb")
    before = kernel.memory_info().rss

    async def craft() -> tuple[int | None, dict]:
        page = await KernelSocket.open(app.port, kernel_id)
        comm, _ = await page.find("jobs", "points", "tiers")
        await page.update(comm, {"jobs": "x" * 900_000})  # under the limit: read, and refused in one line
        huge = page.message("comm_msg", {"comm_id": comm, "data": {"method": "update", "state": {"jobs": 10},
                                                                   "buffer_paths": [], "pad": "x" * 3 * 2**20}})
        cut = False
        try:
            await page.send_text(json.dumps(huge))
        except (WebSocketClosedError, StreamClosedError):
            cut = True  # the server closed it while the frame was still going out
        while await page.read(30) is not None:
            pass
        code = page.connection.close_code
        again = await KernelSocket.open(app.port, kernel_id)  # the kernel still answers a well-formed page
        state = await again.state(comm)
        again.close()
        return code, cut, state

    code, cut, state = asyncio.run(craft())
    # "message too big" (1009): the server read no further; when its close met the frame still
    # going out, the write fails instead and no close code reaches the page
    assert code == 1009 or (cut and code is None), code
    assert state["jobs"] != 10
    assert (kernel.memory_info().rss - before) / 2**20 < RSS_GROWTH_MAX_MB


@pytest.mark.parametrize("notebook, traits, raised, pushed, bound", [
    # a value another value's bound is reckoned from: the page raising it must not widen the bound
    ("01-one-score-two-keys.ipynb", ("tiers", "priority", "live"), {"tiers": 10**9}, {"priority": 10**6}, (1, 20)),
    ("02-which-pops-first.ipynb", ("max_priority", "a_priority"), {"max_priority": 10**9}, {"a_priority": 10**8},
     (1, 2**21 - 1)),
    ("05-where-exactness-ends.ipynb", ("width", "first_counter"), {"width": -10**11}, {"first_counter": 9 * 10**10},
     (0, COUNTER_MASK)),
], ids=["hero-tiers", "comparison-max_priority", "frontier-width"])
def test_the_page_cannot_raise_a_bound_the_kernel_holds(app, notebook, traits, raised, pushed, bound):
    """What raising a slider's maximum did to notebook 04, for the values the page may not move."""
    kernel_id, _ = _open(app, notebook)

    async def craft() -> tuple[dict, dict]:
        page = await KernelSocket.open(app.port, kernel_id)
        comm, _ = await page.find(*traits)
        first = await page.update(comm, raised)
        await page.update(comm, pushed)
        state = await page.state(comm)
        page.close()
        return first, state

    first, state = asyncio.run(craft())
    (name, value), = pushed.items()
    assert bound[0] <= state[name] <= bound[1], f"{name} {state[name]} past {bound} after {raised}"
    _refusal(first, next(iter(raised)))


CRAFTED = (10**12, -10**12, 2**53 + 1, 1.5, "x" * 200_000, [[1, 2]] * 20_000, {"a": "b" * 1000}, None)
PAGE_VIEW_NOTEBOOKS = sorted(path.name for path in NOTEBOOKS.glob("0[1-9]-*.ipynb")
                             if '"AnyModel"' in path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("notebook", PAGE_VIEW_NOTEBOOKS)
def test_every_value_of_every_page_view_sent_absurd_leaves_the_kernel_and_redis_bounded(app, notebook):
    """Each value a page view's model has, sent huge, negative, fractional, as a long text, a long
    list, a dict or nothing: the kernel keeps answering, its memory and the Redis keys stay bounded,
    and its status stays one short line (never a traceback)."""
    kernel_id, kernel = _open(app, notebook)
    client = redis.Redis.from_url(app.redis_url)
    before, keys_before = kernel.memory_info().rss, client.dbsize()

    async def craft() -> int:
        page = await KernelSocket.open(app.port, kernel_id)
        sent = 0
        for comm in await page.widget_comms():
            state = await page.state(comm)
            if "_esm" not in state:
                continue  # a layout: no view
            for name in [name for name in state if not name.startswith("_") and name not in ("layout", "status")]:
                for value in CRAFTED:
                    status = (await page.update(comm, {name: value})).get("status", "")  # what it said, if anything
                    assert "\n" not in status and "Traceback" not in status and len(status) < 1000, (name, status[:300])
                    sent += 1
                await page.update(comm, {name: state[name]})  # as it was: the next value is sent alone
        page.close()
        return sent

    assert asyncio.run(craft()) > 20
    assert (kernel.memory_info().rss - before) / 2**20 < RSS_GROWTH_MAX_MB
    assert client.dbsize() <= keys_before + 200, (keys_before, client.dbsize())


# -- a culled kernel's keys ----------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["private", "shared"])
def test_a_culled_kernels_keys_go_once_its_lease_lapsed_and_nobody_elses(tmp_path, where):
    """Culled pages once left their queues in the app's private Redis for good (1.49 M keys)."""
    from echomq_viz.experiments.live import Demo

    shared = RedisServer().start() if where == "shared" else None
    try:
        env = {"ECHOMQ_VIZ_LEASE_SECONDS": "3", **({"REDIS_URL": shared.url} if shared else {})}
        app = Launched("app", NOTEBOOKS, log=tmp_path / "app.log", env=env)
        client = redis.Redis.from_url(app.redis_url)
        try:
            other = Demo("viz-01-someone-else", client=shared.client()) if shared else None  # a live owner's queue
            if other is not None:
                other.reset()
                other.add_batch([1, 2, 3])
            others = set(client.keys("*someone-else*")) | set(client.keys("*lease*"))
            kernel_id, kernel = _open(app, "04-tiers-as-bands.ipynb")

            async def visit() -> None:  # the page connects, then its tab closes
                page = await KernelSocket.open(app.port, kernel_id)
                await page.state((await page.widget_comms())[0])
                page.close()

            asyncio.run(visit())
            ours = {key for key in client.keys("*viz-04-bands@*")}
            assert len(ours) > 100, ours  # the first view's queue: its jobs, on Redis
            kernel.send_signal(signal.SIGSTOP)  # a kernel that cannot clean up: culled, then killed after the grace
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and set(client.keys("*viz-04-bands@*")):
                time.sleep(1)
            assert not set(client.keys("*viz-04-bands@*")), app.log_tail()
            assert not kernel.is_running() or kernel.status() == psutil.STATUS_ZOMBIE
            removed = re.search(r"Removed (\d+) demo keys of kernels that stopped", app.log.read_text())
            assert removed and int(removed.group(1)) >= len(ours) - 1, app.log_tail()  # (its lease: gone by itself)
            if other is not None:
                assert others <= set(client.keys("*")), "a live owner's keys went"
                assert other.entries()  # and its queue still works
        finally:
            if shared is None:
                app.stop_and_check()
            else:
                app.stop()
    finally:
        if shared is not None:
            shared.stop()
    assert "Traceback" not in (tmp_path / "app.log").read_text()
