"""How many kernels ``echomq-viz app`` admits and for how long: the default
cap counts the cores as well as the memory, a visitor (a browser session)
holds at most a few seats, and a page that says nothing gives its seat back
even with its websocket open. The live tests run a real app and real
websockets (:mod:`kernel_socket`)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from echomq_viz.launcher._app_server import VISITOR_COOKIE
from echomq_viz.launcher.seats import (KERNEL_MB, SEAT_IDLE_S, SEATS_PER_VISITOR, STUDENTS_PER_CORE, cap_line,
                                       cores, default_max_kernels, memory_seats)
from conftest import wait_until
from kernel_socket import KernelSocket, kernel_id_of
from test_app_server import RunningApp

MB = 2**20


def test_the_default_cap_is_the_smaller_of_what_memory_holds_and_the_cores_serve():
    assert memory_seats(10 * KERNEL_MB * MB) == 9  # a tenth kept for the server and Redis
    assert memory_seats(0) == 1
    assert default_max_kernels(1000 * KERNEL_MB * MB, cpus=2) == 2 * STUDENTS_PER_CORE  # cores bind
    assert default_max_kernels(10 * KERNEL_MB * MB, cpus=2) == 9  # memory binds
    assert 1 <= cores() and default_max_kernels() <= STUDENTS_PER_CORE * cores()


def test_the_first_line_says_the_cap_and_what_set_it():
    plenty = 1000 * KERNEL_MB * MB
    line = cap_line(60, chosen=False, available_bytes=plenty, cpus=2)
    assert line.startswith(f"at most 60 visitors' kernels at once: 2 cores at about {STUDENTS_PER_CORE} students "
                           f"a core (the memory would hold 900: {1000 * KERNEL_MB:,} MB available")
    assert f"at most {SEATS_PER_VISITOR} a visitor" in line and f"silent for {SEAT_IDLE_S // 60} min" in line
    assert line.endswith("(--max-kernels N to change)")
    little = cap_line(9, chosen=False, available_bytes=10 * KERNEL_MB * MB, cpus=2)
    assert little.startswith(f"at most 9 visitors' kernels at once: {10 * KERNEL_MB:,} MB available at about "
                             f"{KERNEL_MB} MB a kernel (the cores would serve {2 * STUDENTS_PER_CORE}")
    assert cap_line(20, chosen=True).startswith("at most 20 visitors' kernels at once (--max-kernels), about 2,200 MB")


# -- a real app --------------------------------------------------------------------------------------


class Visitor:
    """A browser session: the app's cookie kept and sent back."""

    def __init__(self, app: RunningApp) -> None:
        self.app, self.cookie = app, ""

    def page(self) -> tuple[int, str]:
        request = urllib.request.Request(self.app.base + "/voila/render/tiny.ipynb",
                                         headers={"Cookie": self.cookie} if self.cookie else {})
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                for header in reply.headers.get_all("Set-Cookie") or []:
                    if header.startswith(f"{VISITOR_COOKIE}="):
                        self.cookie = header.split(";", 1)[0]
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()


@pytest.fixture
def running():
    """``make(*options)``: an app on a tiny notebook in a short folder of its own (the private
    Redis's socket lives under its TMPDIR), stopped and removed afterwards."""
    made = []

    def make(*options: str) -> RunningApp:
        folder = Path(tempfile.mkdtemp(prefix="emq-seat-", dir="/tmp"))
        made.append(folder)
        app = RunningApp(folder, *options)
        made.append(app)
        return app

    yield make
    for thing in reversed(made):
        if isinstance(thing, RunningApp):
            thing.stop()
        else:
            shutil.rmtree(thing, ignore_errors=True)


@pytest.mark.slow
def test_a_visitor_holds_at_most_their_share_and_a_new_page_gives_back_their_stalest(running):
    app = running("--max-kernels", "4", "--seats-per-visitor", "2")
    assert "at most 4 visitors' kernels at once (--max-kernels), about 440 MB; at most 2 a visitor" in app.text()
    student, other = Visitor(app), Visitor(app)
    status, page = student.page()
    assert status == 200 and student.cookie, "the first page names the browser session"
    first = kernel_id_of(page)
    assert student.page()[0] == 200  # the same session: its second seat
    assert app.kernels() == 2
    status, page = student.page()  # a third page: their stalest seat goes, the class keeps room
    assert status == 200 and kernel_id_of(page) != first
    assert wait_until(lambda: app.kernels() == 2, 30), app.text()[-2000:]
    assert f"Releasing kernel {first}: its visitor opened a page beyond 2" in app.text()
    assert other.page()[0] == 200 and other.page()[0] == 200  # another session: seats of its own
    assert app.kernels() == 4
    status, page = Visitor(app).page()  # a third session finds the class full: its one line
    assert status == 503 and "The class is full: 4 of 4 seats taken" in page
    assert "Traceback" not in app.text()


@pytest.mark.slow
def test_in_a_full_class_the_page_a_student_left_gives_them_its_seat_at_once(running):
    """A student following the page's own "Next" link in a full class: the page they left was
    culled only about ten seconds later, and until then the class was full to them, by their own
    seat. That seat is theirs at once; another session still finds the class full."""
    app = running("--max-kernels", "2")
    student, other = Visitor(app), Visitor(app)
    left = kernel_id_of(student.page()[1])
    assert other.page()[0] == 200 and Visitor(app).page()[0] == 503

    async def visit_and_leave() -> None:
        socket = await KernelSocket.open(app.port, left)
        await socket.send("kernel_info_request", {})
        socket.close()

    asyncio.run(visit_and_leave())
    assert wait_until(lambda: student.page()[0] == 200, 8), app.text()[-2000:]
    assert f"Releasing kernel {left}: the class is full and its visitor's page has left" in app.text()
    assert Visitor(app).page()[0] == 503 and app.kernels() == 2
    assert "Traceback" not in app.text()


@pytest.mark.slow
def test_a_silent_page_gives_its_seat_back_with_its_websocket_open(running):
    """A script holding websockets open keeps no seat: only a page that speaks does."""
    app = running("--max-kernels", "2", "--seat-idle-minutes", "0.15")
    assert "a page silent for 9 s gives its seat back" in app.text()
    silent, talking = (kernel_id_of(Visitor(app).page()[1]) for _ in range(2))
    assert Visitor(app).page()[0] == 503  # both seats held

    async def hold() -> str:
        sockets = [await KernelSocket.open(app.port, kernel_id) for kernel_id in (silent, talking)]
        released_at = None
        for round_ in range(12):  # 24 s at most: past twice the timeout
            await sockets[1].send("kernel_info_request", {})  # one page speaks every 2 s, the other never
            await asyncio.sleep(2)
            if released_at is None and f"Releasing kernel {silent}" in app.text():
                released_at = round_  # past the timeout, with the talking page speaking all along
            if released_at is not None and round_ > released_at:  # and a round on: that pass is logged whole
                break
        log = app.text()  # read with both websockets still open on this side
        for socket in sockets:
            socket.close()
        return log

    log = asyncio.run(hold())
    assert f"Releasing kernel {silent}: its page has sent nothing for" in log, log[-2000:]
    assert f"Releasing kernel {talking}" not in log and f"({talking})" not in log
    status, page = Visitor(app).page()  # the silent page's seat is free again
    assert status == 200 and "class is full" not in page
    assert "Traceback" not in app.text()
