"""A class on one ``echomq-viz app``: N students drag notebook 01's hero at once, live on Redis.

    python benchmarks/classroom.py --sessions 120 --ramp 20,40,60,80,100 --seconds 20 --json OUT
    python benchmarks/classroom.py --app-cpus 0 --sessions 50 --ramp 20,30,40 --pause 0

A student is what a browser tab does, without the browser: visit the Voila
page of notebook 01 (Voila starts one kernel and runs the notebook), then
speak the Jupyter kernel protocol over the kernel's websocket as the page's
widget manager does: load every widget state, find the hero's page model
(``widgets.hero.HeroFigure``, an anywidget: ``AnyModel`` with an ``_esm``,
``priority`` and ``live_enabled``) and drive it as ``page/hero.js`` and
``page/controls.js`` do.

The page draws the hero. A drag with "live on Redis" off is redrawn there
and sends the kernel nothing, by design, so the students here send nothing
for it either: such a move is only counted (``page_moves``). The kernel's
load is a drag with live on: the page sends the changed value (``priority``
or ``counter``) as an ipywidgets ``update`` at most every 250 ms
(``controls.js coalesced``; the hands here send every 100 ms, more often) and never while one is in flight (ipywidgets'
own throttle: the next waits for the kernel's idle after the last); the
kernel adds a job at exactly that position through ``addPrioritizedJob-9``
and answers with an update of ``live_answer``. So a hand here sends one
update 100-120 ms after its last, or once the kernel is done with the last
if that is later: more often than the page's coalescing allows. A hand
follows a ``--pattern``: "presses" (the default, a class at work) drags in the
page for 4-8 s, then presses on Redis and goes off again; "live" drags live
on for 4-8 s, then switches live off for 1-2 s of page-only moves and on
again. A press switches live on (the values moved meanwhile and ``live: true`` in one
update, as the page's buffered changes go, then the page's ``ping``, which
the kernel must answer with ``pong`` within 2 s or the page switches live
off again). Students join a few at a time, each switching live on as it
comes in; the ramp adds students and, once all are in, measures for
``--seconds``. The app is always stopped at the end, which stops its
kernels and its Redis. Loopback only.

What is reported (each step, and as ``classroom_*`` keys for the last one):

- latency: a live update or a press sent -> the ``live_answer`` update
  naming that exact (priority, counter) received (``p50_ms``, ``p95_ms``);
  for the presses alone, ``press_p95_ms``;
- CPU per message: what each part (the Voila server, the kernels, Redis,
  this generator) used over the window, divided by the messages the
  students sent the kernels in it: the live updates, with the few switches
  and pings shared out over them (``cpu_ms_per_move``; its ``kernels`` is
  the kernel CPU per live update); ``adds_per_move``, ``adds_per_press``:
  the jobs Redis added per live move and per switch on (the kernel adds one
  per value an update changes: a switch on after the page moved both
  sliders adds three);
- errors: a page that fails or shows an error output, a websocket that drops,
  a Redis answer or pong that never comes, a pong later than the page waits,
  an error or refusal in the view's status line, an ``error`` message from
  the kernel (run total, joins included);
- cross-talk: an answer that is not this student's own (see
  ``Student._check_answer``; run total);
- kernel RSS: resident memory of each student's kernel (psutil) at the end of
  a step; the largest is reported, and the median USS (memory the kernel
  alone holds: what one more student adds; libraries are shared);
- max sessions: the largest ramp step N such that it and every smaller step
  kept p95 <= 100 ms with all N students still at work;
- a pause (:func:`pause_step`, after the ramp): one student's kernel is
  stopped (SIGSTOP) for ``--pause`` seconds, past its lease, while the others
  work and ``echomq-viz clean`` runs; reported as ``classroom_pause_*``;
- the app's own log, kept for the run: the lines that say something failed
  (a kernel that died, a traceback), so a counted error says why
  (``classroom_app_log_problems``).

With ``--app-cpus 0`` the app runs on CPU 0 only and the students on the
others: the capacity of one core with the browsers' work elsewhere, as in a
real class (:func:`bench_one_core`, ``classroom_core_*`` in results.json).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import html
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import numpy as np
import orjson
import psutil
from tornado.httpclient import AsyncHTTPClient
from tornado.websocket import WebSocketClosedError, websocket_connect

from echomq_viz.redis_side._process import _running
from echomq_viz.redis_side.server import free_tcp_port

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01-one-score-two-keys.ipynb"
COUNTER_MAX = 2**32 - 1
TIER_SPAN = 2**32

# controls.js coalesced() sends a live value at most every 250 ms; a hand here sends every 100 ms, as
# the page did before, so the class is harder on the kernel than one in the page would be
MOVE_INTERVAL_S = 0.1
# How a hand alternates (seconds live on Redis, then seconds of moves drawn in the page alone):
# - "presses", a class at work: drags in the page, and now and then a press on Redis (the switch
#   on, its answer, off again);
# - "live", the heaviest hand: drags live on Redis for seconds at a time, off only briefly.
PATTERNS = {"presses": ((0.0, 0.0), (4.0, 8.0)), "live": ((4.0, 8.0), (1.0, 2.0))}
PONG_WAIT_S = 2.0  # controls.js askKernel: no pong this soon after the switch, and the page turns live off
ANSWER_TIMEOUT_S = 10.0
PAGE_TIMEOUT_S = 180.0  # the page returns once its notebook has run; slow on a busy machine
JOINING_AT_ONCE = 3  # page visits in flight at a time: students come in gradually
P95_LIMIT_MS = 100.0
RAMP = (50, 100, 150)  # a class comes in waves; the last is the class at its fullest

GOALS = {
    "classroom_max_sessions": (">=", 150), "classroom_p95_ms": ("<=", P95_LIMIT_MS),
    "classroom_errors": ("<=", 0), "classroom_crosstalk": ("<=", 0),
    "classroom_kernel_rss_mb": ("<=", 90),
    "classroom_pause_others_errors": ("<=", 0), "classroom_pause_crosstalk": ("<=", 0),
    "classroom_pause_one_clear_line": (">=", 1),
}

# The ipywidgets control comm (``jupyter.widget.control``) protocol major version.
WIDGET_CONTROL_VERSION = "1.0.0"


def is_hero(state: dict) -> bool:
    """Whether a widget state is the hero's page model (``widgets.hero.HeroFigure``):
    an anywidget (``AnyModel``, its ES module in ``_esm``) with the hero's values."""
    return (state.get("_model_name") == "AnyModel" and "_esm" in state
            and "priority" in state and "live_enabled" in state)


# -- the kernel protocol over a websocket ---------------------------------------------------------
#
# jupyter_server's v1 framing (the subprotocol JupyterLab's services, and so
# Voila's page, ask for): one binary frame per message, a little-endian uint64
# count of offsets, the offsets, the channel name, then the parts (header,
# parent header, metadata, content as JSON; the buffers as they are).
# (Not the legacy JSON framing: Voila 0.5.13's websocket handler reads every
# binary frame it sends as v1, and a legacy one (a message with buffers)
# sends it into an endless loop that stops the server.)

SUBPROTOCOL = "v1.kernel.websocket.jupyter.org"


def encode_message(session: str, msg_type: str, content: dict, metadata: dict | None = None,
                   channel: str = "shell", msg_id: str | None = None) -> bytes:
    """One Jupyter message (protocol 5.3) as the v1 binary frame the server expects."""
    header = {"msg_id": msg_id or uuid.uuid4().hex, "msg_type": msg_type, "username": "student",
              "session": session, "date": datetime.now(timezone.utc).isoformat(), "version": "5.3"}
    parts = [orjson.dumps(part) for part in (header, {}, metadata or {}, content)]
    name = channel.encode()
    offsets = [8 * (len(parts) + 3)]  # count + (channel start, channel end, one end per part)
    for chunk in (name, *parts):
        offsets.append(offsets[-1] + len(chunk))
    return b"".join([len(offsets).to_bytes(8, "little"),
                     *(offset.to_bytes(8, "little") for offset in offsets), name, *parts])


def decode_message(frame: bytes) -> tuple[str, dict, dict, dict, list[bytes]]:
    """A v1 frame from the server as (channel, header, parent header, content, buffers)."""
    count = int.from_bytes(frame[:8], "little")
    offsets = [int.from_bytes(frame[8 * i:8 * (i + 1)], "little") for i in range(1, count + 1)]
    chunks = [frame[start:stop] for start, stop in zip(offsets, offsets[1:])]
    channel, header, parent, _metadata, content, *buffers = chunks
    return channel.decode(), orjson.loads(header), orjson.loads(parent), orjson.loads(content), buffers


# -- what the run records --------------------------------------------------------------------------


@dataclass
class Record:
    """Everything the students observed, each with the (monotonic) time it happened."""

    moves: list[tuple[float, float]] = field(default_factory=list)  # (answered at, ms from the live update)
    presses: list[tuple[float, float]] = field(default_factory=list)  # (answered at, ms from the switch on)
    # each message a student sent its kernel: (sent at, "move" | "press" | "off" | "ping")
    sent: list[tuple[float, str]] = field(default_factory=list)
    # each ``live_answer`` received, one job added: (received at, "move" | "press": the update it answers)
    answers: list[tuple[float, str]] = field(default_factory=list)
    page_moves: list[float] = field(default_factory=list)  # each move drawn in the page alone (live off)
    errors: list[tuple[float, str]] = field(default_factory=list)
    crosstalk: list[tuple[float, str]] = field(default_factory=list)

    def error(self, student: int, what: str) -> None:
        self.errors.append((time.monotonic(), f"student {student}: {what}"))

    def cross(self, student: int, what: str) -> None:
        self.crosstalk.append((time.monotonic(), f"student {student}: {what}"))


def _page_says(page: str) -> str:
    """What a page without a kernel shows instead: its title, first and last words, on one line."""
    title = re.search(r"<title>(.*?)</title>", page, re.S)
    text = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", page, flags=re.S | re.I)
    words = " ".join(html.unescape(text).split())
    shown = words if len(words) <= 320 else f"{words[:120]} … {words[-200:]}"  # a failed cell shows last
    return f"{len(page):,} bytes; title {html.unescape(title.group(1)).strip()!r}; text {shown!r}" if title \
        else f"{len(page):,} bytes; text {shown!r}"


class StudentGone(Exception):
    """A student cannot go on (page failed, websocket closed); already recorded."""


class Student:
    """One page visit of notebook 01 and the hand on its hero."""

    def __init__(self, number: int, base_url: str, record: Record, pattern: str = "presses") -> None:
        self.number, self.base_url, self.record = number, base_url, record
        self.live_for, self.live_off = PATTERNS[pattern]
        self.rng = random.Random(number)
        self.session = uuid.uuid4().hex
        self.kernel_id = ""
        self.ws = None
        self.models: dict[str, dict] = {}  # model id -> state
        self.model_id = ""  # the hero's page model: its comm
        self.own = {"priority": 1, "counter": 1}  # the page model's values: what this student last set
        self.tiers = 6
        self.live = False  # the page's "live on Redis" switch
        self.unsent: dict = {}  # moved in the page while live was off: the next update carries them
        self.recent: collections.deque = collections.deque(maxlen=32)  # positions sent to the kernel, newest last
        self.last_job_id: int | None = None
        # the last live update: the position it awaits, its answer, "move" or "press"
        self._pending: tuple[tuple[int, int], asyncio.Future, str] | None = None
        self._pong: asyncio.Future | None = None
        self._idle: dict[str, asyncio.Future] = {}  # msg_id of an update -> the kernel's idle after it
        self._states: asyncio.Future | None = None
        self._reader: asyncio.Task | None = None
        self.resting = asyncio.Event()  # set when the hand has stopped (drag returned)
        self.closed = False

    # -- joining: what the page and its widget manager do ---------------------------------------

    async def join(self) -> None:
        response = await AsyncHTTPClient().fetch(f"{self.base_url}/voila/render/{NOTEBOOK}",
                                                 request_timeout=PAGE_TIMEOUT_S, raise_error=False)
        if response.code != 200:
            self._gone(f"page: HTTP {response.code} {response.reason}")
        page = response.body.decode()
        kernel = re.search(r'"kernelId": "([0-9a-f-]+)"', page)
        root = re.search(r'"model_id": "([0-9a-f]+)"', page)
        if kernel is None or root is None:
            self._gone(f"page: no kernel id or no widget in it ({_page_says(page)})")
        if "application/vnd.jupyter.stderr" in page:
            self.record.error(self.number, "page: the notebook printed an error")
        self.kernel_id = kernel.group(1)
        ws_url = self.base_url.replace("http", "ws", 1)
        self.ws = await websocket_connect(
            f"{ws_url}/api/kernels/{self.kernel_id}/channels?session_id={self.session}",
            subprotocols=[SUBPROTOCOL], max_message_size=64 * 2**20)
        if self.ws.selected_subprotocol != SUBPROTOCOL:
            self._gone(f"the server did not accept the {SUBPROTOCOL} websocket protocol")
        self._reader = asyncio.ensure_future(self._read())
        await self._load_widgets(root.group(1))
        await self.press()  # the class is asked to switch live on

    async def _load_widgets(self, shown_id: str) -> None:
        """All widget states through the control comm, as ipywidgets 8's manager
        loads them; then the hero's page model among them (the one the page
        shows first, if there are more)."""
        control = uuid.uuid4().hex
        self._states = asyncio.get_running_loop().create_future()
        self._send("comm_open", {"comm_id": control, "target_name": "jupyter.widget.control",
                                 "data": {}}, metadata={"version": WIDGET_CONTROL_VERSION})
        self._comm(control, {"method": "request_states"})
        await self._wait(self._states, "widget states", fatal=True)
        heroes = [model_id for model_id, state in self.models.items() if is_hero(state)]
        if not heroes:
            names = sorted({state.get("_model_name", "?") for state in self.models.values()})
            self._gone(f"no hero page model (AnyModel with _esm, priority, live_enabled) among the widgets: {names}")
        self.model_id = shown_id if shown_id in heroes else heroes[0]
        state = self.models[self.model_id]
        if not state["live_enabled"]:
            self._gone("the hero was made without a demo queue: live on Redis is disabled")
        self.own = {"priority": int(state["priority"]), "counter": int(state["counter"])}
        self.tiers = int(state.get("tiers") or 6)
        self.live = bool(state.get("live"))

    # -- the websocket ----------------------------------------------------------------------------

    def _send(self, msg_type: str, content: dict, metadata: dict | None = None) -> str:
        """Send one message on the shell channel; its msg_id."""
        msg_id = uuid.uuid4().hex
        try:
            self.ws.write_message(encode_message(self.session, msg_type, content, metadata, msg_id=msg_id),
                                  binary=True)
        except WebSocketClosedError:
            raise StudentGone("kernel websocket closed") from None  # the reader has recorded it
        return msg_id

    def _comm(self, comm_id: str, data: dict) -> str:
        return self._send("comm_msg", {"comm_id": comm_id, "data": data})

    def _update(self, state: dict, kind: str) -> asyncio.Future:
        """The hero's changed values, as the widget manager's ``save_changes``
        sends them; the future: the kernel's idle after it (ipywidgets sends
        no further update before that)."""
        msg_id = self._comm(self.model_id, {"method": "update", "state": state, "buffer_paths": []})
        self.record.sent.append((time.monotonic(), kind))
        idle = asyncio.get_running_loop().create_future()
        self._idle[msg_id] = idle
        return idle

    async def _read(self) -> None:
        while True:
            frame = await self.ws.read_message()
            if frame is None:
                if not self.closed:
                    self.record.error(self.number, "kernel websocket closed")
                    self.closed = True
                waiting = [self._states, self._pong, *self._idle.values()]
                if self._pending is not None:
                    waiting.append(self._pending[1])
                for future in waiting:
                    if future is not None and not future.done():
                        future.set_exception(StudentGone())
                return
            try:
                _channel, header, parent, content, _buffers = decode_message(frame)
                self._on_message(header["msg_type"], parent, content)
            except Exception as exc:  # one bad message is one error, not a dead student
                self.record.error(self.number, f"unreadable message: {type(exc).__name__}: {exc}")

    def _on_message(self, kind: str, parent: dict, content: dict) -> None:
        if kind == "error":
            self.record.error(self.number, f"kernel error: {content.get('ename')}: {content.get('evalue')}")
            return
        if kind == "status":
            if content.get("execution_state") == "idle":
                _resolve(self._idle.pop(parent.get("msg_id"), None), time.perf_counter())
            return
        if kind != "comm_msg":
            return
        data = content.get("data", {})
        comm_id = content.get("comm_id")
        method = data.get("method")
        if method == "update_states":
            self.models = {model_id: {**entry["state"], "_model_name": entry["model_name"]}
                           for model_id, entry in data["states"].items()}
            _resolve(self._states, None)
        elif not comm_id or comm_id != self.model_id:
            return
        elif method == "custom":
            if (data.get("content") or {}).get("kind") == "pong":
                _resolve(self._pong, time.perf_counter())
        elif method in ("update", "echo_update"):
            state = data.get("state", {})
            self.models.setdefault(comm_id, {}).update(state)
            if method == "update":  # the kernel's own changes (an echo only repeats what was sent)
                self._on_state(state)

    def _on_state(self, state: dict) -> None:
        status = state.get("status")
        if isinstance(status, str) and status.startswith(("error", "refused")):
            self.record.error(self.number, f"the view's status: {status.strip()}")
            if self._pending is not None:  # no answer comes for it: the student goes on at once
                _resolve(self._pending[1], None)
        answer = state.get("live_answer")
        if answer:
            self.record.answers.append((time.monotonic(), self._pending[2] if self._pending else "?"))
            position = self._check_answer(answer)
            if self._pending is not None and position == self._pending[0]:
                _resolve(self._pending[1], time.perf_counter())

    async def _wait(self, future: asyncio.Future, what: str, *, fatal: bool = False,
                    timeout: float = ANSWER_TIMEOUT_S):
        """What ``future`` brings; after ``timeout`` an error, and the student
        gives up if ``fatal`` (else None: a student whose page heard nothing
        just goes on dragging)."""
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            if fatal:
                self._gone(f"no {what} within {timeout:g} s")
            self.record.error(self.number, f"no {what} within {timeout:g} s")
            return None

    async def _settle(self, idle: asyncio.Future) -> None:
        """Wait for the kernel's idle after an update, as ipywidgets' throttle does
        before the next (quietly: a missing answer is already an error)."""
        try:
            await asyncio.wait_for(idle, ANSWER_TIMEOUT_S)
        except asyncio.TimeoutError:
            self._idle = {msg_id: future for msg_id, future in self._idle.items() if future is not idle}

    def _gone(self, why: str):
        self.record.error(self.number, why)
        raise StudentGone(why)

    # -- the hand ---------------------------------------------------------------------------------

    async def drag(self, until: asyncio.Event) -> None:
        """Drag: live on, one update each time the page's coalescing (and
        ipywidgets' throttle) lets one go; now and then live off for a while,
        moves drawn in the page alone, then on again."""
        loop = asyncio.get_running_loop()
        next_move = loop.time()
        switch_at = loop.time() + self.rng.uniform(*(self.live_for if self.live else self.live_off))
        try:
            while not until.is_set() and not self.closed:
                if loop.time() >= switch_at:
                    if self.live:
                        await self.switch_off()
                    else:
                        await self.press()
                    switch_at = loop.time() + self.rng.uniform(*(self.live_for if self.live else self.live_off))
                elif self.live:
                    await self.move()
                else:
                    self.page_move()
                next_move = max(next_move + MOVE_INTERVAL_S * self.rng.uniform(1.0, 1.2), loop.time())
                try:
                    await asyncio.wait_for(until.wait(), next_move - loop.time())
                except asyncio.TimeoutError:
                    pass
        except StudentGone:
            self.closed = True
        finally:
            self.resting.set()

    def _pick(self) -> tuple[str, int]:
        """A new value for one slider (mostly the counter, as in the notebook's story)."""
        if self.tiers > 1 and self.rng.random() < 0.3:
            return "priority", self.rng.choice([p for p in range(1, self.tiers + 1) if p != self.own["priority"]])
        return "counter", self.rng.randrange(COUNTER_MAX + 1)

    def _position(self) -> tuple[int, int]:
        return self.own["priority"], self.own["counter"]

    def page_move(self) -> None:
        """A move with live off: the page redraws and sends nothing; the value waits in the page's model."""
        role, value = self._pick()
        self.own[role] = value
        self.unsent[role] = value
        self.record.page_moves.append(time.monotonic())

    def _send_live(self, state: dict, kind: str) -> tuple[asyncio.Future, asyncio.Future, float]:
        """Send an update while live: (its answer, the kernel's idle after it, when it went)."""
        position = self._position()
        self.recent.append(position)
        answer = asyncio.get_running_loop().create_future()
        self._pending = (position, answer, kind)
        sent = time.perf_counter()
        return answer, self._update(state, kind), sent

    async def move(self) -> None:
        """One live move: the changed value sent, timed to Redis's answer naming this position."""
        role, value = self._pick()
        self.own[role] = value
        answer, idle, sent = self._send_live({role: value}, "move")
        arrived = await self._wait(answer, "Redis answer to a live move")
        if arrived is not None:
            self.record.moves.append((time.monotonic(), (arrived - sent) * 1000))
        await self._settle(idle)

    async def switch_off(self) -> None:
        """Switch "live on Redis" off: the kernel adds nothing for it."""
        self.live = False
        idle = self._update({**self.unsent, "live": False}, "off")
        self.unsent = {}
        await self._settle(idle)

    async def press(self) -> None:
        """Switch "live on Redis" on, as the checkbox does (a student already
        live switches it off first): the values moved in the page meanwhile
        and ``live: true`` in one update, then the page's ping. Timed to
        Redis's answer naming the current position; the pong must come
        within PONG_WAIT_S, or the page says it has no kernel and turns live
        off (without telling the kernel)."""
        if self.live:
            await self.switch_off()
        self.live = True
        state, self.unsent = {**self.unsent, "live": True}, {}
        self._pong = asyncio.get_running_loop().create_future()
        answer, idle, sent = self._send_live(state, "press")
        self._comm(self.model_id, {"method": "custom", "content": {"kind": "ping"}})
        self.record.sent.append((time.monotonic(), "ping"))
        arrived = await self._wait(answer, "Redis answer after switching live on")
        if arrived is not None:
            self.record.presses.append((time.monotonic(), (arrived - sent) * 1000))
        pong = await self._wait(self._pong, "pong after switching live on")
        if pong is not None and pong - sent > PONG_WAIT_S:
            self.record.error(self.number, f"pong {(pong - sent) * 1000:.0f} ms after switching live on: "
                                           f"the page waits {PONG_WAIT_S:g} s, then turns live off")
        if pong is None or pong - sent > PONG_WAIT_S:
            self.live = False
            self.unsent["live"] = False  # the page's model says off; the kernel hears it with the next update
        await self._settle(idle)

    def _check_answer(self, answer: dict) -> tuple[int, int] | None:
        """Cross-talk: Redis's answer (``live_answer``) is this student's own when
        - it names a position this student sent (the kernel holds no values
          from anyone else),
        - Redis stored that position's score (nobody moved this queue's ``pc``
          between the kernel setting it and the script's INCR), and
        - its job id is one more than this student's previous job id (the
          queue's id counter moved only by this student's own adds; a reset
          or another student's add shows as a gap or a step back). Each add
          is answered, so the adds one update makes (one per value it
          changes) take one id each.
        Returns the position it names (None if unreadable)."""
        try:
            position = (int(answer["priority"]), int(answer["counter"]))
            stored = int(answer["stored"])
            job_id = str(answer["job_id"])
        except (KeyError, TypeError, ValueError):
            self.record.error(self.number, f"unreadable Redis answer {str(answer)[:80]!r}")
            return None
        priority, counter = position
        problems = []
        if position not in self.recent:
            problems.append(f"an answer for priority {priority:,}, counter {counter:,}, which this student never sent")
        score = priority * TIER_SPAN + counter % TIER_SPAN
        if stored != score:
            problems.append(f"Redis stored {stored:,}, the score of priority {priority:,}, counter {counter:,} "
                            f"is {score:,}")
        number = int(job_id) if job_id.isdigit() else None
        if number is None:
            problems.append(f"job id {job_id!r} is not a number")
        elif self.last_job_id is not None and number != self.last_job_id + 1:
            problems.append(f"job id {number} after this student's job {self.last_job_id}")
        self.last_job_id = number
        if problems:
            self.record.cross(self.number, "; ".join(problems))
        return position

    async def leave(self) -> None:
        self.closed = True
        if self.ws is not None:
            self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (asyncio.TimeoutError, StudentGone):
                self._reader.cancel()


def _resolve(future: asyncio.Future | None, value) -> None:
    if future is not None and not future.done():
        future.set_result(value)


# -- the app: started, watched, always stopped ---------------------------------------------------


# The Voila server as ``echomq-viz app`` starts it (``-m echomq_viz.launcher._voila``; before the
# package's layers, ``-m echomq_viz._voila``), or a plain ``voila``.
KERNEL_FILE = re.compile(r"kernel-([0-9a-f-]{36})\.json")  # a kernel's connection file, in its command line
SERVER_COMMAND = re.compile(r"-m (echomq_viz\.(launcher\.)?_voila|voila)\b|/voila\b")


# A line of the app's log that says something went wrong (the app prints no secret, so it is kept):
# an error, a timeout, or a kernel culled while the class is still at work.
APP_LOG_PROBLEM = re.compile(r"Traceback|\w+(Error|Exception)\b|\b(died|failed|ERROR|Timeout)\b|timed out|Culling '")


def log_problems(text: str, limit: int = 12) -> list[str]:
    """The first ``limit`` distinct lines of ``text`` that say something went
    wrong, each at most 300 characters: the log's own lines and the
    exceptions they end in, not a traceback's frames."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        if line[:1].isspace() or line.startswith("Traceback ("):
            continue  # a traceback's frames: its last line names the exception
        if APP_LOG_PROBLEM.search(line):
            found.setdefault(line.strip()[:300])
            if len(found) == limit:
                break
    return list(found)


class App:
    """``echomq-viz app`` on a free loopback port, stopped (SIGTERM: kernels,
    then Redis) when the block ends, whatever happened inside. Its log is
    kept in an unnamed temp file until then (:meth:`problems`)."""

    def __init__(self, cpus: set[int] | None = None, options: tuple[str, ...] = ()) -> None:
        self.cpus = cpus  # the app's processes run only on these (its kernels and Redis inherit them)
        self.options = options  # more of echomq-viz app's options (--max-kernels N)
        self.port = free_tcp_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.leftovers: list[int] = []
        self.log = tempfile.TemporaryFile()

    def __enter__(self) -> "App":
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env.pop("REDIS_URL", None)  # the app's own embedded Redis, as in a classroom; never someone's server
        with running_on(self.cpus):  # the app starts with this thread's CPUs
            self.process = subprocess.Popen(
                [sys.executable, "-m", "echomq_viz", "app", "--no-browser", "--port", str(self.port),
                 *self.options, "--Voila.ip=127.0.0.1", "--Voila.token="],  # its students' clients send none
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__(None, None, None)
                    raise RuntimeError("echomq-viz app did not start listening within 60 s")
                time.sleep(0.2)
        return self

    def __exit__(self, *exc) -> None:
        if self.process is None:
            return
        family = self.family()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # The launcher promises nothing outlives it; note (and end) anything that does.
        for proc in family:
            try:
                if _running(proc):
                    self.leftovers.append(proc.pid)
                    proc.kill()
            except psutil.NoSuchProcess:
                pass

    def problems(self) -> list[str]:
        """What the app's log says went wrong, so far (:func:`log_problems`)."""
        self.log.seek(0)
        return log_problems(self.log.read().decode(errors="replace"))

    def family(self, with_app: bool = False) -> list[psutil.Process]:
        """The app's processes below it (and the app's own first, ``with_app``); none once it is gone."""
        try:
            app = psutil.Process(self.process.pid)
            return [app, *app.children(recursive=True)] if with_app else app.children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time used so far by the Voila server, all kernels, Redis, and
        this load generator: where a step's time went."""
        used = {"server": 0.0, "kernels": 0.0, "redis": 0.0, "generator": 0.0}
        for proc in [*self.family(), psutil.Process()]:
            try:
                line = " ".join(proc.cmdline())
                times = proc.cpu_times()
            except psutil.Error:
                continue
            part = ("generator" if proc.pid == os.getpid() else "kernels" if KERNEL_FILE.search(line)
                    else "server" if SERVER_COMMAND.search(line) else "redis" if "redis-server" in line else None)
            if part:
                used[part] += times.user + times.system
        return used

    def cpus_in_use(self) -> list[int]:
        """The CPUs the app's processes may run on (all of them together)."""
        if not CAN_PIN:  # nothing was pinned
            return sorted(my_cpus())
        cpus: set[int] = set()
        for proc in self.family(with_app=True):
            try:
                cpus.update(proc.cpu_affinity())
            except psutil.Error:
                pass
        return sorted(cpus)

    def kernel_memory_mb(self, kernel_ids: list[str]) -> dict[str, tuple[float, float]]:
        """Memory of each kernel, found by its connection file's name: (resident,
        its own alone: USS, what one more student adds; the rest is shared)."""
        wanted, found = set(kernel_ids), {}
        for proc in self.family():
            try:
                line = " ".join(proc.cmdline())
                match = KERNEL_FILE.search(line)
                if match and match.group(1) in wanted:
                    memory = proc.memory_full_info()
                    found[match.group(1)] = (memory.rss / 2**20, memory.uss / 2**20)
            except psutil.Error:
                pass
        return found


# -- the ramp ---------------------------------------------------------------------------------


def _percentile(samples: list[float], q: float) -> float | None:
    return round(float(np.percentile(samples, q)), 1) if samples else None


async def _join_all(students: list[Student], record: Record) -> list[Student]:
    gate = asyncio.Semaphore(JOINING_AT_ONCE)

    async def join(student: Student) -> Student | None:
        async with gate:
            try:
                await student.join()
                return student
            except StudentGone:
                pass
            except Exception as exc:  # a join that fails in a way not foreseen is still one error
                record.error(student.number, f"join: {type(exc).__name__}: {exc}")
            await student.leave()
            return None

    joined = await asyncio.gather(*(join(s) for s in students))
    return [s for s in joined if s is not None]


async def run_classroom(app: App, ramp: list[int], seconds: float, log=print, pause_s: float = 0,
                        pattern: str = "presses") -> dict:
    record = Record()
    present: list[Student] = []
    hands: list[asyncio.Task] = []
    stop = asyncio.Event()
    steps = []
    try:
        for size in ramp:
            newcomers = [Student(n, app.base_url, record, pattern) for n in range(len(present), size)]
            started = time.monotonic()
            joined = await _join_all(newcomers, record)
            present += joined
            hands += [asyncio.ensure_future(s.drag(stop)) for s in joined]
            join_s = time.monotonic() - started
            cpu_before = app.cpu_seconds()
            window_start = time.monotonic()
            await asyncio.sleep(seconds)
            window_end = time.monotonic()
            cpu_used = {part: used - cpu_before[part] for part, used in app.cpu_seconds().items()}
            cpu = {part: round(used / (window_end - window_start) * 100) for part, used in cpu_used.items()}
            inside = lambda rows: [row for row in rows if window_start <= row[0] < window_end]  # noqa: E731
            moves = [ms for _, ms in inside(record.moves)]
            presses = [ms for _, ms in inside(record.presses)]
            answered = moves + presses  # every Redis answer the students waited for
            sent = [kind for _, kind in inside(record.sent)]
            answers = collections.Counter(kind for _, kind in inside(record.answers))
            page_moves = [at for at in record.page_moves if window_start <= at < window_end]
            memory = app.kernel_memory_mb([s.kernel_id for s in present if not s.closed])
            rss = {kernel: resident for kernel, (resident, _) in memory.items()}
            uss = [own for _, own in memory.values()]
            steps.append({
                "sessions": size, "joined": len(present),
                "active": sum(not s.closed for s in present), "join_s": round(join_s, 1),
                "moves": len(moves), "moves_per_s": round(len(moves) / seconds, 1),
                "p50_ms": _percentile(answered, 50), "p95_ms": _percentile(answered, 95),
                "max_ms": _percentile(answered, 100),
                "presses": len(presses), "press_p95_ms": _percentile(presses, 95),
                # messages the kernels handled, and the jobs their updates added (one per value changed)
                "messages": len(sent), "adds_per_move": _ratio(answers["move"], sent.count("move")),
                "adds_per_press": _ratio(answers["press"], sent.count("press")),
                # moves drawn in the page alone (live off): nothing sent, nothing for the kernel to do
                "page_moves": len(page_moves), "page_moves_per_s": round(len(page_moves) / seconds, 1),
                "errors": len(inside(record.errors)), "crosstalk": len(inside(record.crosstalk)),
                "kernel_rss_mb_max": round(max(rss.values()), 1) if rss else None,
                "kernel_rss_mb_median": round(float(np.median(list(rss.values()))), 1) if rss else None,
                "kernel_uss_mb_median": round(float(np.median(uss)), 1) if uss else None,
                "cpu_pct": cpu,  # percent of one core over the window, per part
                "cpu_ms_per_move": _per_move(cpu_used, len(sent)),
                "load_1min": round(os.getloadavg()[0], 2),
                "app_cpus": app.cpus_in_use(),
            })
            log(_step_line(steps[-1]))
        paused = await pause_step(app, present, record, pause_s, log) if pause_s else {}
    finally:
        stop.set()
        await asyncio.gather(*hands, return_exceptions=True)
        await asyncio.gather(*(s.leave() for s in present), return_exceptions=True)
    return {**summarize(steps, record), **paused}


def _ratio(count: int, of: int) -> float | None:
    return round(count / of, 2) if of else None


def _per_move(cpu_used: dict[str, float], messages: int) -> dict[str, float] | None:
    """CPU milliseconds per message the students sent their kernels, per part
    and in all: what one live update costs the machine (the few switches
    and pings are counted with them; a page-only move costs nothing)."""
    if not messages:
        return None
    per_move = {part: round(used / messages * 1000, 2) for part, used in cpu_used.items()}
    per_move["total"] = round(sum(cpu_used.values()) / messages * 1000, 2)
    return per_move


def summarize(steps: list[dict], record: Record) -> dict:
    last = steps[-1] if steps else {}
    max_sessions = 0
    for step in steps:
        if step["p95_ms"] is None or step["p95_ms"] > P95_LIMIT_MS or step["active"] < step["sessions"]:
            break
        max_sessions = step["sessions"]
    return {
        "classroom_sessions": last.get("active", 0),  # students still at work when the last step ended
        "classroom_p50_ms": last.get("p50_ms"),
        "classroom_p95_ms": last.get("p95_ms"),
        "classroom_errors": len(record.errors),
        "classroom_crosstalk": len(record.crosstalk),
        "classroom_kernel_rss_mb": last.get("kernel_rss_mb_max"),
        "classroom_kernel_uss_mb": last.get("kernel_uss_mb_median"),  # what one more student adds
        "classroom_cpu_ms_per_move": {step["sessions"]: step["cpu_ms_per_move"] for step in steps},
        "classroom_max_sessions": max_sessions,
        "classroom_press_p95_ms": last.get("press_p95_ms"),
        "classroom_moves_per_s": last.get("moves_per_s"),  # live updates answered per second, all students
        "classroom_adds_per_move": last.get("adds_per_move"),
        "classroom_adds_per_press": last.get("adds_per_press"),  # more than 1: one per value the switch carries
        "classroom_page_moves": last.get("page_moves"),  # drawn in the page alone: nothing sent
        "classroom_steps": steps,
        "classroom_error_samples": [what for _, what in record.errors[:5]],
        "classroom_crosstalk_samples": [what for _, what in record.crosstalk[:5]],
    }


def _step_line(step: dict) -> str:
    return (f"{step['sessions']:>4} {step['joined']:>6} {step['active']:>6} {step['join_s']:>7} {step['moves_per_s']:>7} "
            f"{step['page_moves_per_s']:>6} {step['p50_ms']!s:>7} {step['p95_ms']!s:>7} {step['press_p95_ms']!s:>9} "
            f"{step['errors']:>6} {step['crosstalk']:>9} {step['kernel_rss_mb_max']!s:>7} {step['load_1min']:>6} "
            + "/".join(str(step["cpu_pct"][part]) for part in CPU_PARTS) + "  "
            + "/".join(str((step["cpu_ms_per_move"] or {}).get(part)) for part in (*CPU_PARTS, "total")))


CPU_PARTS = ("server", "kernels", "redis", "generator")
HEADER = (f"{'N':>4} {'joined':>6} {'active':>6} {'join_s':>7} {'live/s':>7} {'page/s':>6} {'p50_ms':>7} {'p95_ms':>7} "
          f"{'press_p95':>9} {'errors':>6} {'crosstalk':>9} {'rss_mb':>7} {'load':>6} cpu% {'/'.join(CPU_PARTS)}  "
          f"cpu ms/message {'/'.join((*CPU_PARTS, 'total'))}")


# Whether a process's CPUs can be set here (Linux): --app-cpus needs it.
CAN_PIN = hasattr(os, "sched_setaffinity")


def my_cpus() -> set[int]:
    """The CPUs this process may run on (all of them where that cannot be asked)."""
    if CAN_PIN:
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


@contextlib.contextmanager
def running_on(cpus: set[int] | None) -> Iterator[None]:
    """This thread runs on ``cpus`` for the block, then on its own CPUs
    again; None changes nothing. A process started meanwhile keeps them (a
    child starts with its parent's CPUs; no preexec_fn, which is not safe in
    a process with threads)."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def bench_classroom(sessions: int, ramp: list[int] | None = None, seconds: float = 20.0, log=print,
                    pause_s: float = 40.0, app_cpus: set[int] | None = None, pattern: str = "presses") -> dict:
    """Start the app, run the ramp up to ``sessions`` students, stop the app;
    the ``classroom_*`` results (for ``benchmarks/run.py`` too).

    With ``app_cpus`` the app (server, kernels, Redis) runs on those CPUs
    only and the students (this process) on the others, as a class's
    browsers run on their own laptops: the students' cost is then no longer
    taken from the app's CPUs."""
    ramp = sorted({n for n in (ramp or []) if n < sessions} | {sessions})
    load_before = os.getloadavg()[0]
    mine = my_cpus()
    generator_cpus = None if app_cpus is None else mine - set(app_cpus)
    if app_cpus is not None and not CAN_PIN:
        raise ValueError("app CPUs need Linux (os.sched_setaffinity)")
    if app_cpus is not None and (not set(app_cpus) <= mine or not generator_cpus):
        raise ValueError(f"app CPUs must be some of this process's CPUs {sorted(mine)}, leaving one or more "
                         f"for the students; got {sorted(app_cpus)}")
    log(HEADER)
    # the teacher's seat count for this class (the app's default is 30 a core: docs/classroom.md)
    with App(app_cpus, ("--max-kernels", str(sessions))) as app, running_on(generator_cpus):
        results = asyncio.run(run_classroom(app, ramp, seconds, log, pause_s, pattern))
    results["classroom_app_log_problems"] = app.problems()
    app.log.close()
    for line in results["classroom_app_log_problems"]:
        log(f"app log: {line}")
    results["classroom_seconds_per_step"] = seconds
    results["classroom_pattern"] = pattern
    results["classroom_cpus"] = {"app": sorted(app_cpus or mine), "students": sorted(generator_cpus or mine)}
    results["classroom_leftover_processes"] = len(app.leftovers)
    # Other work on the machine shows in the load before the run (ours adds to it during).
    results["classroom_machine"] = (f"{os.cpu_count()} cpu, load {load_before:.2f} before the run, "
                                    f"{os.getloadavg()[0]:.2f} at the end")
    return results


# One core: the app on one CPU, the students on the others. How many students
# one core holds when the browsers' work is elsewhere, as in a real class.
CORE_RAMP = (20, 30, 40, 50)
CORE_STEP_KEYS = ("sessions", "active", "moves_per_s", "p50_ms", "p95_ms", "errors", "crosstalk",
                  "cpu_pct", "cpu_ms_per_move", "app_cpus")


def bench_one_core(ramp: tuple[int, ...] = CORE_RAMP, seconds: float = 20.0, log=print) -> dict:
    """The ramp with the app (server, kernels, Redis) on this process's first
    CPU and the students on the rest; the ``classroom_core_*`` results."""
    cpus = sorted(my_cpus())
    if len(cpus) < 2 or not CAN_PIN:
        return {"classroom_core_max_sessions": None,
                "classroom_core_note": "needs Linux and two CPUs or more: one for the app, the others for the students"}
    results = bench_classroom(ramp[-1], list(ramp[:-1]), seconds, log, pause_s=0, app_cpus={cpus[0]})
    return {
        "classroom_core_max_sessions": results["classroom_max_sessions"],
        "classroom_core_cpus": results["classroom_cpus"],
        "classroom_core_errors": results["classroom_errors"],
        "classroom_core_error_samples": results["classroom_error_samples"],
        "classroom_core_crosstalk": results["classroom_crosstalk"],
        "classroom_core_app_log_problems": results["classroom_app_log_problems"],
        "classroom_core_steps": [{key: step[key] for key in CORE_STEP_KEYS} for step in results["classroom_steps"]],
    }


# -- a kernel paused past its lease -------------------------------------------------------------------


def _kernel_process(app: App, kernel_id: str) -> psutil.Process | None:
    for proc in app.family():
        try:
            if f"kernel-{kernel_id}.json" in " ".join(proc.cmdline()):
                return proc
        except psutil.Error:
            pass
    return None


async def _clean(url: str) -> int:
    """``echomq-viz clean`` on ``url``, the real command: how many keys it removed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REDIS_URL": url}  # a password never on a command line
    done = await asyncio.create_subprocess_exec(sys.executable, "-m", "echomq_viz", "clean", env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await done.communicate()
    found = re.search(r"removed (\d+)", out.decode())
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"echomq-viz clean failed: {err.decode().strip()[-200:]}")
    return int(found.group(1))


async def pause_step(app: App, present: list[Student], record: Record, pause_s: float, log=print) -> dict:
    """Student 0 leaves its kernel stopped (SIGSTOP, as a closed laptop lid)
    for ``pause_s`` while the others drag and ``echomq-viz clean`` runs every
    few seconds; then it comes back and switches "live on Redis" on twice.
    The first press must show one clear line (its lease lapsed, its queue may
    be cleaned), the second must work, on a fresh queue. The others: no error,
    no cross-talk, in the whole step."""
    kernel = _kernel_process(app, present[0].kernel_id) if len(present) > 1 else None
    if kernel is None:
        log("pause step skipped: it needs two students and the first one's kernel")
        return {"classroom_pause_one_clear_line": None}
    student, started = present[0], time.monotonic()
    student.closed = True  # its hand rests: its drag ends once the update in flight is answered
    with contextlib.suppress(asyncio.TimeoutError):  # nothing of its own left in flight when the lid shuts
        await asyncio.wait_for(student.resting.wait(), 2 * ANSWER_TIMEOUT_S + 5)
    url = kernel.environ()["REDIS_URL"]
    cleaned = 0
    kernel.suspend()
    try:
        while time.monotonic() < started + pause_s:
            cleaned += await _clean(url)
            await asyncio.sleep(min(5.0, max(0.0, started + pause_s - time.monotonic())))
    finally:
        kernel.resume()
    cleaned += await _clean(url)  # after the lease lapsed for sure
    student.closed = False
    mine = f"student {student.number}: "
    with contextlib.suppress(StudentGone):  # recorded: its lines say so
        await student.press()
    lines = [what.removeprefix(mine) for at, what in record.errors if at >= started and what.startswith(mine)]
    student.last_job_id = None  # a fresh queue: its ids start again
    pressed = len(record.presses)
    with contextlib.suppress(StudentGone):
        await student.press()
    status = [line for line in lines if line.startswith("the view's status:")]
    # What the paused student saw on return is reported here, not as the run's errors.
    record.errors[:] = [(at, what) for at, what in record.errors if at < started or not what.startswith(mine)]
    others = [what for at, what in record.errors if at >= started and not what.startswith(mine)]
    crosstalk = [what for at, what in record.crosstalk if at >= started]
    step = {
        "classroom_pause_s": pause_s, "classroom_pause_cleaned_keys": cleaned,
        "classroom_pause_resumed_lines": lines,
        "classroom_pause_one_clear_line": int(len(status) == 1 and "lease" in status[0] and "\n" not in status[0]),
        "classroom_pause_second_press_ok": int(len(record.presses) > pressed),
        "classroom_pause_others_errors": len(others), "classroom_pause_crosstalk": len(crosstalk),
        "classroom_pause_samples": (others + crosstalk)[:5],
    }
    log(f"pause {pause_s:g} s: {cleaned} keys cleaned; on return {lines}; others: {len(others)} errors, "
        f"{len(crosstalk)} cross-talk")
    return step


def _cpu_set(text: str) -> set[int]:
    try:
        cpus = {int(word) for word in text.split(",") if word.strip()}
    except ValueError:
        cpus = set()
    if not cpus or min(cpus) < 0:
        raise argparse.ArgumentTypeError(f"--app-cpus must be CPU numbers separated by commas (e.g. 0), got {text!r}")
    return cpus


def _positive_ints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--ramp must be numbers separated by commas, got {text!r}") from None
    if not values or any(not 1 <= v <= 200 for v in values):
        raise argparse.ArgumentTypeError(f"--ramp values must be in 1..200, got {text!r}")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=RAMP[-1],
                        help=f"students at the end (1..200, default {RAMP[-1]})")
    parser.add_argument("--ramp", type=_positive_ints, default=list(RAMP[:-1]),
                        help=f"student counts measured on the way (default {','.join(map(str, RAMP[:-1]))})")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per step (default 20)")
    parser.add_argument("--pause", type=float, default=40.0,
                        help="seconds one kernel is stopped after the ramp (0: none; default 40, past the 30 s lease)")
    parser.add_argument("--app-cpus", type=_cpu_set, default=None, metavar="LIST",
                        help="run the app on these CPUs only (e.g. 0) and the students on the others")
    parser.add_argument("--pattern", choices=sorted(PATTERNS), default="presses",
                        help="presses (default): drags in the page, a press on Redis every 4-8 s; "
                             "live: drags live on Redis, off for 1-2 s at a time")
    parser.add_argument("--json", metavar="OUT", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 200:
        parser.error(f"--sessions must be in 1..200, got {args.sessions}")
    if not 1 <= args.seconds <= 600:
        parser.error(f"--seconds must be in 1..600, got {args.seconds:g}")
    if not 0 <= args.pause <= 600:
        parser.error(f"--pause must be in 0..600, got {args.pause:g}")
    try:
        results = bench_classroom(args.sessions, args.ramp, args.seconds, pause_s=args.pause, app_cpus=args.app_cpus,
                                  pattern=args.pattern)
    except ValueError as exc:
        parser.error(f"--app-cpus: {exc}")
    from report import print_results  # a neighbour: benchmarks/ is sys.path[0] when this runs

    print_results(results, GOALS, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
