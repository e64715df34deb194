"""Who can reach ``echomq-viz lab`` and ``app``: this machine only, unless asked.

JupyterLab runs any code; the app serves every notebook and starts a kernel
for every page load. So both listen on loopback, pinned on their command line
(a config file's ``ip`` cannot widen it), and :func:`bind_refusal` turns down
any option that would listen elsewhere (``--ip``, ``--Voila.ip=``,
``--ServerApp.ip``, ... set to ``0.0.0.0``, ``::``, ``*``, an address of this
machine or a name that resolves off loopback) unless ``--public`` is given;
and :func:`listen_refusal` turns down, in one line, an address the server
could not listen on (a name that does not resolve, another machine's address).

With ``--public`` the server requires a token: ``$JUPYTER_TOKEN`` when set,
else a fresh random one. It reaches the server through a 0600 file named in
``$ECHOMQ_VIZ_TOKEN_FILE``, which the server's own entry point
(:mod:`echomq_viz.launcher._voila`, :mod:`echomq_viz.launcher._jupyterlab`) turns into a
command-line option inside its process (:func:`token_options`): the command
line beats every config file, so none can empty the token, and no other user
sees it in a process list. The links that hold it go to another 0600 file,
whose path is printed, never the token itself.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import re
import secrets
import socket
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["LOOPBACK", "PUBLIC_PORTS", "requested_binds", "off_loopback", "bind_refusal", "listen_problem",
           "listen_refusal", "token_refusal",
           "refusal", "port", "pinned", "for_voila", "own_token", "token_options", "TOKEN_FILE_ENV", "Publication"]

LOOPBACK = "127.0.0.1"
TOKEN_FILE_ENV = "ECHOMQ_VIZ_TOKEN_FILE"
PUBLIC_PORTS = {"lab": 8888, "app": 8866}  # --public without --port: a fixed port, so the links are right
PUBLIC_HELP = (f"allow listening beyond {LOOPBACK} (--ip=0.0.0.0, --Voila.ip=..., ...); a token is then required "
               "($JUPYTER_TOKEN or a fresh one) and the links holding it go to a file only you can read "
               "(default port {port})")
_IP_OPTION = re.compile(r"--(?:[A-Za-z_]\w*\.)*ip(?:=(?P<value>.*))?")
_AUTH_OPTION = re.compile(r"--(?:[A-Za-z_]\w*\.)*(?P<name>[\w-]*(?:token|password)[\w-]*)(?:=.*)?", re.IGNORECASE)
_EVERYWHERE = ("", "*", "0.0.0.0", "::", "[::]")


def requested_binds(extra: Sequence[str]) -> list[tuple[str, str]]:
    """Each address the options ask the server to listen on: ``(option as typed, address)``."""
    found = []
    for index, arg in enumerate(extra):
        match = _IP_OPTION.fullmatch(arg)
        if match is None:
            continue
        if match["value"] is not None:
            found.append((arg, match["value"]))
        elif index + 1 < len(extra) and not extra[index + 1].startswith("-"):
            found.append((f"{arg} {extra[index + 1]}", extra[index + 1]))
        else:
            found.append((arg, ""))  # traitlets would refuse it; count it as the widest
    return found


def pinned(option: str, extra: Sequence[str]) -> list[str]:
    """``[option=127.0.0.1]`` unless ``extra`` names an address (checked by
    :func:`bind_refusal`): a config file's ``ip`` then cannot widen it (the
    command line wins; traitlets refuses the same option twice)."""
    return [] if requested_binds(extra) else [f"{option}={LOOPBACK}"]


def for_voila(extra: Sequence[str]) -> list[str]:
    """``extra`` with ``--ip`` spelt ``--Voila.ip``: Voila has no ``--ip`` (it warns and ignores it)."""
    spelt = list(extra)
    for index, arg in enumerate(spelt):
        if arg == "--ip" or arg.startswith("--ip="):
            spelt[index] = "--Voila.ip" + arg[len("--ip"):]
    return spelt


def off_loopback(address: str) -> str | None:
    """Why listening on ``address`` reaches beyond this machine, or None when
    every address it stands for is a loopback one."""
    if address.strip() in _EVERYWHERE:
        return "every interface"
    host = address.strip().strip("[]")
    try:
        addresses = [ipaddress.ip_address(host.split("%")[0])]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError):
            return "a name that does not resolve here, so possibly not loopback"
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    for each in addresses:
        mapped = getattr(each, "ipv4_mapped", None)
        if not (each.is_loopback or (mapped is not None and mapped.is_loopback)):
            return f"{each} is not a loopback address" if str(each) != host else "not a loopback address"
    return None


def _first_refused(extra: Sequence[str], problem: Callable[[str], str | None],
                   say: Callable[[str, str], str]) -> str | None:
    """``say(option, why)`` for the first address asked for in ``extra`` that ``problem`` refuses, or None."""
    for option, address in requested_binds(extra):
        why = problem(address)
        if why:
            return say(option, why)
    return None


def bind_refusal(command: str, extra: Sequence[str], public: bool) -> str | None:
    """The one line refusing to serve beyond loopback without ``--public``, or None."""
    if public:
        return None
    return _first_refused(extra, off_loopback, lambda option, why: (
        f"echomq-viz {command}: {option} would serve the notebooks to other hosts ({why}); "
        f"add --public to do that (it then requires a token), or drop it to stay on {LOOPBACK}"))


def listen_problem(address: str) -> str | None:
    """Why a server cannot listen on ``address`` here (a name that does not
    resolve, an address of another machine), in a few words; None when it can:
    every address it stands for binds now (port 0, closed at once), as the
    server will bind them."""
    if address.strip() in _EVERYWHERE:
        return None
    host = address.strip()
    if "[" in host or "]" in host:  # the servers take the address as it is, and resolve no brackets
        return "an IPv6 address is written without brackets here (--ip=::1)"
    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        return "the name does not resolve here"
    for family, kind, proto, _, sockaddr in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                if family == socket.AF_INET6:  # as tornado binds: IPv6 only, where no IPv4 address binds
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(sockaddr)
        except OSError as exc:
            mapped = getattr(ipaddress.ip_address(sockaddr[0].split("%")[0]), "ipv4_mapped", None)
            if mapped is not None:
                return f"{sockaddr[0]} is an IPv4 address written as IPv6: give {mapped}"
            if exc.errno == errno.EADDRNOTAVAIL:
                return f"{sockaddr[0]} is not an address of this machine"
            return f"{sockaddr[0]}: {exc.strerror or exc}"
    return None


def listen_refusal(command: str, extra: Sequence[str]) -> str | None:
    """The one line refusing an address the server could not listen on, or None."""
    return _first_refused(extra, listen_problem, lambda option, why: (
        f"echomq-viz {command}: {option} cannot be listened on: {why}; give an address of this "
        f"machine, or 0.0.0.0 for all of them (with --public)"))


def token_refusal(command: str, extra: Sequence[str]) -> str | None:
    """With ``--public``, the token is ours to set: one line refusing an option
    that sets (or empties) a token or password, or None."""
    for arg in extra:
        match = _AUTH_OPTION.fullmatch(arg)
        if match is not None:
            return (f"echomq-viz {command} --public: {arg.split('=', 1)[0]} is not for --public, which always "
                    f"requires a token: set JUPYTER_TOKEN to choose it, or let echomq-viz make one")
    return None


def refusal(command: str, extra: Sequence[str], *, public: bool, port: int | None) -> str | None:
    """The one line refusing what ``lab`` or ``app`` was asked to serve, or None."""
    if public and port == 0:
        return f"echomq-viz {command} --public: give a fixed --port (the links name it), not 0"
    return (bind_refusal(command, extra, public) or listen_refusal(command, extra)
            or (token_refusal(command, extra) if public else None))


def port(command: str, given: int | None, public: bool) -> int | None:
    """The port to ask for: ``given``, or with ``--public`` a fixed default."""
    return PUBLIC_PORTS[command] if given is None and public else given


def _addresses_to_give(address: str) -> list[str]:
    """Where visitors reach a server listening on ``address``: itself, or for
    a wildcard every non-loopback, non-link-local address of this machine."""
    if address.strip() not in _EVERYWHERE:
        host = address.strip().strip("[]")
        return [f"[{host}]" if ":" in host else host]
    import psutil  # here: only --public on every interface needs it

    found = []
    for addresses in psutil.net_if_addrs().values():
        for entry in addresses:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            ip = ipaddress.ip_address(entry.address.split("%")[0])
            if not (ip.is_loopback or ip.is_link_local):
                found.append((ip.version, f"[{ip}]" if ip.version == 6 else str(ip)))
    return [shown for _, shown in sorted(found)] or [socket.gethostname()]


class Publication:
    """What ``--public`` sets up in a run's own 0700 folder: the token file
    the server reads, and the links file for the person who started it.

    :param run_dir: the run's private folder (deleted when the run ends).
    :param address: what the server listens on, as given.
    :param port: its port.
    :param path: the page to open, e.g. ``lab`` or ``""``.
    """

    def __init__(self, run_dir: Path, address: str, port: int, path: str = "") -> None:
        self.token = os.environ.get("JUPYTER_TOKEN") or secrets.token_urlsafe(24)
        self.token_file = _private_file(run_dir / "token", self.token)
        links = [f"http://{host}:{port}/{path}?token={self.token}" for host in _addresses_to_give(address)]
        self.links_file = _private_file(run_dir / "links.txt", "\n".join(links) + "\n")
        self.where = f"{address or '*'}:{port}"

    @classmethod
    def of(cls, command: str, extra: Sequence[str], port: int, run_dir: Path) -> "Publication":
        """For ``lab`` or ``app`` run with the options ``extra`` (the last address asked for wins)."""
        binds = requested_binds(extra)
        return cls(run_dir, binds[-1][1] if binds else LOOPBACK, port, "lab" if command == "lab" else "")

    def announce(self, say: Callable[[str], None]) -> dict[str, str]:
        """Tell the person who started it, once (no token in it); return what the
        server's environment needs: where the token is (the token itself would reach every kernel)."""
        for line in self.lines():
            say(line)
        return {TOKEN_FILE_ENV: str(self.token_file)}

    def lines(self) -> list[str]:
        """What to tell the person who started it; no token in them."""
        return [f"WARNING: --public serves the notebooks on {self.where} to every host that can reach it, "
                f"to anyone with the token; each page starts a kernel on this machine",
                f"the links with the token are in {self.links_file} (yours only, gone when this stops)"]


def own_token(extra: Sequence[str], run_dir: Path) -> Path | None:
    """A token for a server on loopback, in a 0600 file of the run's own folder as ``--public``'s
    is: a server that makes its own token prints it in full with its address (jupyter_server does),
    one it is given is shown as ``...``. ``JUPYTER_TOKEN`` when set (Voila would ignore it and
    serve with none), else a fresh one; None where a token or password option in ``extra`` chose."""
    if any(_AUTH_OPTION.fullmatch(arg) for arg in extra):
        return None
    return _private_file(run_dir / "token", os.environ.get("JUPYTER_TOKEN") or secrets.token_urlsafe(24))


def token_options(option: str) -> list[str]:
    """``[option=<token>]`` for a server started with ``--public`` (its token
    file named in ``$ECHOMQ_VIZ_TOKEN_FILE``), else ``[]``: appended to the
    server's ``sys.argv`` inside its process, never to its exec'd command line."""
    path = os.environ.get(TOKEN_FILE_ENV)
    if not path:
        return []
    return [f"{option}={Path(path).read_text(encoding='utf-8')}"]


def _private_file(path: Path, text: str) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path
