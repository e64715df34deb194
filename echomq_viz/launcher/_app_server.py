"""The app's Voila server doing less per kernel message (see :mod:`echomq_viz.launcher._voila`),
and culling only kernels whose page has left.

In a class dragging sliders the server relays about seven messages per move.
Two costs there were not relaying: the activity watcher's parsing of each
message, and debug log records built only to be dropped.

The app culls a kernel idle for 10 s with no page connected, so a closed
tab frees its memory at once. A page still loading has no connection yet:
its notebook still running on a busy server, or its browser still fetching
the page's scripts. Such a kernel gets :data:`PAGE_LOAD_GRACE_S` idle
seconds before it is culled as a page that never came.

A class nobody can take down: at most ``AppKernelManager.max_kernels``
kernels at once (``echomq-viz app --max-kernels N``; by default what the
machine's memory and cores serve: :mod:`echomq_viz.launcher.seats`). A page asked
for beyond that gets one friendly line and a 503, and starts no kernel
(:class:`SeatedVoilaHandler`). Seats rotate: a visitor (a browser session,
known by a cookie) holds at most ``seats_per_visitor`` kernels, a new page
giving back that visitor's stalest; and a kernel whose page has sent nothing
for ``seat_idle_timeout`` seconds is shut down even while its websocket stays
open (:class:`PageWebsocketHandler` notes each message). A kernel that stops
has its demo keys removed once its lease lapsed (:mod:`echomq_viz.launcher._app_orphans`).
Template paths that are no static file answer 404 (:class:`TemplateFileHandler`), never a traceback.
"""

from __future__ import annotations

import contextlib
import contextvars
import html
import logging
import os
import re
import secrets
import threading
import webbrowser
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import tornado.web
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets import Integer
from voila.app import Voila
from voila.static_file_handler import TemplateStaticFileHandler
from voila.tornado.handler import TornadoVoilaHandler
from voila.tornado.kernel_websocket_handler import VoilaKernelWebsocketHandler

from echomq_viz.launcher import app_index
from echomq_viz.launcher._app_orphans import OrphanSweeper
from echomq_viz.launcher.exposure import TOKEN_FILE_ENV
from echomq_viz.launcher.notebook_copies import shipped_notebooks
from echomq_viz.launcher.seats import SEAT_IDLE_S, SEATS_PER_VISITOR, class_full_line
from echomq_viz.launcher.trust import trust_shipped

__all__ = ["AppKernelManager", "AppVoila", "PAGE_LOAD_GRACE_S", "PAGE_MESSAGE_MAX", "VISITOR_COOKIE",
           "PageWebsocketHandler", "SeatedVoilaHandler", "TemplateFileHandler"]

# How long a kernel whose page never connected may sit idle before it is culled: a
# page's scripts load in seconds; with the cap, a server is never so busy that it takes longer.
PAGE_LOAD_GRACE_S = 30
# The largest websocket message a page may send (tornado's default is 10 MiB): a page's
# values are a few numbers and short texts; a longer message closes its websocket.
PAGE_MESSAGE_MAX = 2**20
VISITOR_COOKIE = "echomq_viz_visitor"  # a browser session's random name: its seats are counted together
_VISITOR = re.compile(r"[A-Za-z0-9_-]{22}")  # secrets.token_urlsafe(16)
_SEAT: contextvars.ContextVar["_Seat | None"] = contextvars.ContextVar("echomq_viz_seat", default=None)


class _Seat:
    """A page admitted but whose kernel is not counted yet."""

    def __init__(self, manager: "AppKernelManager", visitor: str) -> None:
        self.manager, self.visitor, self.held = manager, visitor, True
        manager.admitting.append(self)

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.manager.admitting.remove(self)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)  # as jupyter_server stamps activity


class AppKernelManager(AsyncMappingKernelManager):
    """jupyter_server's kernel manager with a cheaper activity watcher.

    The watcher reads every message a kernel publishes, to keep the kernel's
    last activity and execution state (what culling goes by).
    jupyter_server's checks each message's signature and parses its dates,
    a status message twice over: about a quarter of the server's CPU in a
    class dragging sliders. This one parses the header, the parent header
    and a status's content, and keeps the same two fields by the same rules.
    Its socket only listens to the kernel, and nothing it reads is passed on.

    Culling skips a kernel still starting (jupyter_server's culler fails on
    it, with a traceback in the log) and gives one whose page never
    connected :data:`PAGE_LOAD_GRACE_S` (see the module's docstring).
    """

    max_kernels = Integer(0, config=True, help="at most this many kernels at once; 0: no limit")
    seats_per_visitor = Integer(SEATS_PER_VISITOR, config=True,
                                help="at most this many kernels a visitor (a browser session); a new page "
                                     "gives back that visitor's stalest; 0: no limit")
    seat_idle_timeout = Integer(SEAT_IDLE_S, config=True,
                                help="seconds without a message from a kernel's page after which the kernel "
                                     "is shut down, its websocket open or not; 0: never")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.admitting: list[_Seat] = []  # pages admitted whose kernel is still starting
        self.orphans = OrphanSweeper(self.log)

    def seats_taken(self, visitor: str | None = None) -> int:
        """Seats held (by ``visitor``, or by all): a kernel starting is still its page's seat."""
        if visitor is None:
            return len(self._kernels) + len(self.admitting)
        return (sum(getattr(kernel, "visitor", None) == visitor for kernel in self._kernels.values())
                + sum(seat.visitor == visitor for seat in self.admitting))

    async def admit(self, visitor: str) -> "_Seat | None":
        """A seat for one more page of ``visitor`` (their stalest kernel shut down
        first when they hold their share), or None when the class is full."""
        if self.seats_per_visitor and self.seats_taken(visitor) >= self.seats_per_visitor:
            stalest = self._stalest_of(visitor)
            if stalest is not None:
                self.log.info("Releasing kernel %s: its visitor opened a page beyond %d", stalest,
                              self.seats_per_visitor)
                await self.shutdown_kernel(stalest)
            else:  # all their seats are pages still starting
                return None
        if self.max_kernels and self.seats_taken() >= self.max_kernels:
            left = self._left_by(visitor)  # a full class: a student following a link leaves a page
            if left is None:
                return None
            self.log.info("Releasing kernel %s: the class is full and its visitor's page has left", left)
            await self.shutdown_kernel(left)
            if self.seats_taken() >= self.max_kernels:  # taken meanwhile
                return None
        return _Seat(self, visitor)

    def _left_by(self, visitor: str) -> str | None:
        """A kernel of ``visitor``'s whose page came and has gone (the one they just moved on
        from, which the cull would give back in seconds), else None."""
        for kernel_id, kernel in list(self._kernels.items()):
            if (getattr(kernel, "visitor", None) == visitor and getattr(kernel, "page_connected", False)
                    and self._kernel_connections.get(kernel_id, 0) == 0):
                return kernel_id
        return None

    def _stalest_of(self, visitor: str) -> str | None:
        """The visitor's kernel to give back: one whose page has gone first, then the one silent longest."""
        theirs = [(kernel_id, kernel) for kernel_id, kernel in list(self._kernels.items())
                  if getattr(kernel, "visitor", None) == visitor]
        if not theirs:
            return None
        return min(theirs, key=lambda item: (self._kernel_connections.get(item[0], 0) > 0,
                                             self._page_spoke_at(item[1])))[0]

    @staticmethod
    def _page_spoke_at(kernel: Any) -> datetime:
        return getattr(kernel, "page_spoke_at", None) or getattr(kernel, "last_activity", None) or utcnow()

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:
        seat = _SEAT.get()
        try:
            kernel_id = await super().start_kernel(*args, **kwargs)
            if seat is not None and kernel_id in self._kernels:
                self._kernels[kernel_id].visitor = seat.visitor
            return kernel_id
        finally:
            if seat is not None:
                seat.give_back()  # counted as a kernel from here on (or none was started)

    async def shutdown_kernel(self, kernel_id: str, now: bool = False, restart: bool = False) -> None:
        """One kernel stopped (culled, given back, asked): its demo keys go once its lease lapsed."""
        try:
            await super().shutdown_kernel(kernel_id, now=now, restart=restart)
        finally:
            if not restart:
                self.orphans.kernel_stopped()

    def notify_connect(self, kernel_id: str) -> None:
        super().notify_connect(kernel_id)
        kernel = self._kernels.get(kernel_id)
        if kernel is not None:
            kernel.page_connected = True
            kernel.page_spoke_at = utcnow()  # a page connecting has spoken: its silence counts from here

    def page_spoke(self, kernel_id: str) -> None:
        """A message from the kernel's page (what :data:`seat_idle_timeout` counts from)."""
        kernel = self._kernels.get(kernel_id)
        if kernel is not None:
            kernel.page_spoke_at = utcnow()

    async def cull_kernel_if_idle(self, kernel_id: str) -> None:
        kernel = self._kernels.get(kernel_id)
        if kernel is None or not kernel.trait_has_value("last_activity"):
            return  # still starting: its activity is not watched yet
        if (not getattr(kernel, "page_connected", False) and kernel.execution_state != "dead"
                and utcnow() - kernel.last_activity < timedelta(seconds=PAGE_LOAD_GRACE_S)):
            return  # its page is still loading
        silent = utcnow() - getattr(kernel, "page_spoke_at", utcnow())
        if self.seat_idle_timeout and silent > timedelta(seconds=self.seat_idle_timeout):
            self.log.info("Releasing kernel %s: its page has sent nothing for %d s", kernel_id,
                          silent.total_seconds())
            await self.shutdown_kernel(kernel_id)
            return
        await super().cull_kernel_if_idle(kernel_id)

    def start_watching_activity(self, kernel_id: str) -> None:
        kernel = self._kernels[kernel_id]
        kernel.reason = ""
        kernel.last_activity = utcnow()
        kernel._activity_stream = kernel.connect_iopub()
        unpack = kernel.session.unpack  # jupyter_client's JSON reader (orjson when installed)

        def record_activity(msg_list: list) -> None:
            _, parts = kernel.session.feed_identities(msg_list)  # signature, header, parent, metadata, content
            msg_type = unpack(parts[1]).get("msg_type")
            parent_type = unpack(parts[2]).get("msg_type")
            if (self.track_message_type(msg_type) or self.track_message_type(parent_type)
                    or kernel.execution_state == "busy"):
                self.last_kernel_activity = kernel.last_activity = utcnow()
            if msg_type == "status":
                state = unpack(parts[4]).get("execution_state")
                if self.track_message_type(parent_type):
                    kernel.execution_state = state
                elif kernel.execution_state == "starting" and state != "starting":
                    kernel.execution_state = "idle"

        kernel._activity_stream.on_recv(record_activity)


class PageWebsocketHandler(VoilaKernelWebsocketHandler):
    """Voila's kernel websocket, telling the kernel manager of each message
    the page sends (what a seat's idleness counts from), with no Nagle delay."""

    async def open(self, kernel_id: str) -> None:  # type: ignore[override]
        # The kernel answers a press in several small frames (busy, the update, idle), each a write
        # of its own. With Nagle's algorithm on (tornado's default), a frame waits for the page's
        # ACK of the one before, which the page's TCP may delay by 40 ms or more
        self.set_nodelay(True)
        await super().open(kernel_id)

    def on_message(self, message: Any) -> Any:
        page_spoke = getattr(self.kernel_manager, "page_spoke", None)
        if page_spoke is not None:
            page_spoke(self.kernel_id)
        return super().on_message(message)


class SeatedVoilaHandler(TornadoVoilaHandler):
    """Voila's notebook page, which starts a kernel, only while a seat is free;
    over the cap one friendly line (503, Retry-After), and no kernel. The
    visitor's cookie (one random name a browser session) counts their seats."""

    async def get(self, path: Any = None) -> None:
        manager = self.kernel_manager
        admit = getattr(manager, "admit", None)
        seat = await admit(self._visitor()) if admit is not None else None
        if admit is not None and seat is None:
            return self._full(manager)
        token = _SEAT.set(seat)
        try:
            await super().get(path)
        finally:
            _SEAT.reset(token)
            if seat is not None:
                seat.give_back()

    def _visitor(self) -> str:
        """This browser session's name: its cookie's, or a new one sent with the page."""
        visitor = self.get_cookie(VISITOR_COOKIE, "")
        if not _VISITOR.fullmatch(visitor):
            visitor = secrets.token_urlsafe(16)
            self.set_cookie(VISITOR_COOKIE, visitor, path=self.base_url or "/", httponly=True, samesite="Lax")
        return visitor

    def _full(self, manager: AppKernelManager) -> None:
        line = class_full_line(manager.seats_taken(), manager.max_kernels)
        self.log.info("refused a page: %s", line)
        self.set_status(503)
        self.set_header("Retry-After", "60")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        self.finish(f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>The class is full</title>'
                    f'<meta name="viewport" content="width=device-width"></head><body style="font: 20px/1.5 '
                    f'system-ui, sans-serif; margin: 3em auto; max-width: 34em; color: #1a1a1a">'
                    f'<p role="status">{line[0].upper()}{line[1:]}.</p></body></html>\n')


class TemplateFileHandler(TemplateStaticFileHandler):
    """Voila's template files: only ``<template>/static/<path>`` is served;
    any other path (``echomq-viz/conf.json``) is a 404, not a traceback."""

    def parse_url_path(self, path: str) -> str:
        parts = path.split("/", 2)
        if len(parts) != 3 or parts[1] != "static" or not parts[0] or not parts[2]:
            raise tornado.web.HTTPError(404)
        return super().parse_url_path(path)

    @classmethod
    def get_absolute_path(cls, root: str, path: str) -> str:
        try:
            return super().get_absolute_path(root, path)
        except (ValueError, AssertionError):  # a path normpath turned into another shape ("a/static/..")
            raise tornado.web.HTTPError(404) from None


class AppVoila(Voila):
    """Voila, its logger filtering at its own level: traitlets keeps an
    application's logger at DEBUG and filters in the handler, so every debug
    call (one per kernel message) built a record only to drop it."""

    def initialize(self, argv: Any = None) -> None:
        super().initialize(argv)
        self.log.setLevel(self.log_level)
        self.log.addFilter(culling_as_info)
        logging.getLogger("tornado.general").addFilter(culling_as_info)  # its websocket ping warning

    def _handle_signal_stop(self, sig: int, frame: Any) -> None:
        """The launcher's stop (SIGTERM). Voila's own handler stops its loop, which it makes only
        once it starts serving: a stop before that (a Ctrl-C in the app's first seconds) raised
        an AttributeError there, a traceback and exit code 1. Nothing is served yet: just exit."""
        if getattr(self, "ioloop", None) is None:
            raise SystemExit(0)
        super()._handle_signal_stop(sig, frame)

    def launch_browser(self) -> None:
        """Voila opens its address without the token it requires, so the reader met a login page.
        With one, the browser opens the address with it, as JupyterLab's does, through a page in the
        run's own 0700 folder (a command line would show the token to every user of the machine)."""
        token_file = os.environ.get(TOKEN_FILE_ENV)
        if not token_file:
            super().launch_browser()
            return
        try:
            browser = webbrowser.get(self.browser or None)
        except webbrowser.Error as exc:
            self.log.warning("No web browser found: %s.", exc)
            return
        token = Path(token_file).read_text(encoding="utf-8")
        address = f"{self.connection_url.rstrip('/')}{self.base_url}?token={quote(token, safe='')}"
        page = Path(token_file).with_name("open.html")
        with os.fdopen(os.open(page, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600), "w") as handle:
            handle.write(f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={html.escape(address)}">'
                         f'<a href="{html.escape(address)}">Open echomq-viz</a>')
        threading.Thread(target=browser.open, args=(page.as_uri(),), kwargs={"new": self.webbrowser_open_new},
                         daemon=True).start()

    def init_settings(self) -> dict:
        settings = super().init_settings()
        settings.setdefault("websocket_max_message_size", PAGE_MESSAGE_MAX)
        app_index.install(settings["voila_jinja2_env"], self.root_dir)  # the front page's cards
        with contextlib.suppress(SystemExit):  # an installation without notebooks: nothing to trust
            trust_shipped(Path(self.root_dir), shipped_notebooks(), say=self.log.warning)
        return settings


# Lines a teacher can do nothing with, one or two a page: jupyter_server's buffering of a closed
# page's messages (started, replayed to a page that came back, discarded as its kernel stops) and
# its protocol adaptation; tornado 6.5's warning that jupyter_server's default ping timeout (three
# intervals) is longer than the interval, which it then uses, as it always did; Voila's note of the
# launcher's stop, which the launcher has just announced itself.
UNACTIONABLE = ("Starting buffering for ", "Replaying ", "Discarding ", "Adapting from protocol version ",
                "The websocket_ping_timeout (", "Handle signal ")


def culling_as_info(record: logging.LogRecord) -> bool:
    """A culled kernel is news, not a warning: its page has gone, as expected
    (jupyter_server logs it as a WARNING, which alarms whoever reads the terminal).
    The lines of :data:`UNACTIONABLE` are dropped."""
    if record.levelno == logging.WARNING and str(record.msg).startswith("Culling "):
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
    return not str(record.msg).startswith(UNACTIONABLE)
