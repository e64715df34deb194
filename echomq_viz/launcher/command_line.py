"""The ``echomq-viz`` command line: its commands, their options and help.

What each command does is in :mod:`echomq_viz.launcher.cli`; a range an option
must be in is checked there too, before anything starts.
"""

from __future__ import annotations

import argparse

from echomq_viz.launcher import exposure
from echomq_viz.launcher.notebook_copies import USER_FOLDER
from echomq_viz.redis_side.gate import DEFAULT_LIMITS
from echomq_viz.launcher.seats import KERNEL_MB, SEAT_IDLE_S, SEATS_PER_VISITOR, STUDENTS_PER_CORE

__all__ = ["ENV_INSPECT", "NOTEBOOKS_HELP", "LAB_NOTEBOOKS_HELP", "build_parser"]

ENV_INSPECT = "ECHOMQ_VIZ_INSPECT"  # what the app's inspector may reach: "own" or "any"

NOTEBOOKS_HELP = (f"the notebooks folder (default: notebooks/ in a checkout of this project, else your copy "
                  f"of the shipped ones in ./{USER_FOLDER})")
# lab saves what it opens: by default the reader's copy, so a clone's committed notebooks never change
LAB_NOTEBOOKS_HELP = (f"the notebooks folder (default: your copy of the shipped ones in ./{USER_FOLDER}; "
                      f"in a clone, --notebooks notebooks edits the committed ones)")



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="echomq-viz",
        description="The notebooks in JupyterLab, as a Voila app or as offline HTML pages, "
                    "with a private Redis.",
        epilog="Options lab and app do not know go to JupyterLab or Voila, "
               "e.g. echomq-viz app --theme=dark")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{lab,app,redis,clean,acl,gate,export,singleuser}")
    parser.commands = {}  # name -> its parser, for errors found after parsing
    for name, helptext, portname in (
        ("lab", "open the notebooks in JupyterLab with the embedded Redis", "JupyterLab's"),
        ("app", "serve the notebooks as a Voila app with the embedded Redis", "Voila's"),
    ):
        command = sub.add_parser(name, help=helptext)
        command.add_argument("--port", type=int, help=f"{portname} port (fails if it is taken)")
        command.add_argument("--no-browser", action="store_true", help="do not open a browser")
        command.add_argument("--notebooks", metavar="DIR", help=LAB_NOTEBOOKS_HELP if name == "lab" else NOTEBOOKS_HELP)
        command.add_argument("--public", action="store_true", help=exposure.PUBLIC_HELP.format(
            port=exposure.PUBLIC_PORTS[name]))
        parser.commands[name] = command
    parser.commands["app"].add_argument(
        "--max-kernels", type=int, metavar="N",
        help="at most N visitors' kernels at once; a page beyond them gets one line, 'the class is full' "
             f"(default: the smaller of what the available memory holds, about {KERNEL_MB} MB a kernel, and "
             f"{STUDENTS_PER_CORE} a core)")
    parser.commands["app"].add_argument(
        "--seats-per-visitor", type=int, metavar="N",
        help=f"at most N kernels a visitor (a browser session) at once; a new page gives back their stalest "
             f"(default {SEATS_PER_VISITOR})")
    parser.commands["app"].add_argument(
        "--seat-idle-minutes", type=float, metavar="M",
        help=f"a page that sends its kernel nothing for M minutes gives its seat back, its websocket open or "
             f"not (default {SEAT_IDLE_S // 60})")
    _caps_options(parser.commands["app"], "a visitor's (each kernel, on the app's own Redis)")
    parser.commands["app"].add_argument(
        "--inspect-any", action="store_true",
        help=f"let the inspector notebook reach any Redis URL a visitor types ({ENV_INSPECT}=any for "
             f"the kernels); by default it reaches only the app's own Redis ({ENV_INSPECT}=own)")
    redis_cmd = sub.add_parser("redis", help="run the embedded Redis in the foreground")
    parser.commands["redis"] = redis_cmd
    redis_cmd.add_argument("--port", type=int, default=None,
                           help="serve on 127.0.0.1:PORT (0 picks one) with a fresh password, "
                                "instead of a unix socket")
    clean = sub.add_parser("clean", help="remove the demo keys no live kernel owns from REDIS_URL")
    parser.commands["clean"] = clean
    clean.add_argument("--url", help="this Redis instead of REDIS_URL")
    acl = sub.add_parser("acl", help="a Redis user per student on a shared Redis")
    parser.commands["acl"] = acl
    acl_sub = acl.add_subparsers(dest="action", required=True, metavar="{add}")
    acl_add = acl_sub.add_parser("add", help="create or update the user NAME (a fresh password) that reaches only "
                                 "its own demo keys, and write its REDIS_URL to FILE (0600), never shown")
    acl_add.add_argument("name", metavar="NAME", help="the student's name (on a hub: their hub user name)")
    acl_add.add_argument("--out", metavar="FILE", required=True, help="where the student's REDIS_URL goes")
    acl_add.add_argument("--url", help="the operator's Redis URL instead of REDIS_URL")
    _caps_options(acl_add, "the student's")
    acl_add.add_argument("--gate", metavar="HOST:PORT",
                         help="write a URL that reaches Redis through this gate (echomq-viz gate) instead")
    parser.commands["gate"] = _gate_command(sub)
    export = sub.add_parser("export", help="write the notebooks as offline HTML pages")
    export.add_argument("names", nargs="*", help="notebook files to export (default: all)")
    export.add_argument("--out", default="build/html", help="output folder (default build/html)")
    export.add_argument("--notebooks", metavar="DIR", help=NOTEBOOKS_HELP)
    export.add_argument("--cache", metavar="DIR",
                        help="where the fetched JavaScript is kept (default ~/.cache/echomq-viz)")
    export.add_argument("--no-execute", action="store_true",
                        help="use the outputs and widget state stored in the notebooks as they are, with no "
                             "kernel and no Redis: the figures are as the notebooks were last stored")
    singleuser = sub.add_parser("singleuser", help="a student's server on a JupyterHub, in place of "
                                "jupyterhub-singleuser: the notebooks copied into the home, a private Redis")
    singleuser.add_argument("--notebooks", metavar="DIR", help="the notebooks folder (default: the student's "
                            f"copy in ~/{USER_FOLDER}, made or updated now)")
    parser.commands["singleuser"] = singleuser
    return parser


GATE_PORT = 6380


def _gate_command(sub) -> argparse.ArgumentParser:
    gate = sub.add_parser("gate", help="stand between students and a shared Redis: each user's commands one at "
                          "a time per connection, at a rate, so no student can make the others wait")
    gate.add_argument("--url", help="the course's Redis (best a unix:// socket only you can reach) instead of "
                      "REDIS_URL; only its address is used, each student logs in as themselves")
    gate.add_argument("--host", default="127.0.0.1",
                      help="the address to listen on (default 127.0.0.1; another must be this machine's)")
    gate.add_argument("--port", type=int, default=GATE_PORT, help=f"the port (default {GATE_PORT}; 0 picks one)")
    gate.add_argument("--rate", type=int, default=DEFAULT_LIMITS.rate, metavar="N",
                      help=f"commands a second one Redis user may send on average (default {DEFAULT_LIMITS.rate})")
    gate.add_argument("--burst", type=int, default=DEFAULT_LIMITS.burst, metavar="N",
                      help=f"commands one user may send at once before the rate applies (default {DEFAULT_LIMITS.burst})")
    gate.add_argument("--max-connections", type=int, default=DEFAULT_LIMITS.max_connections, metavar="N",
                      help=f"connections one user may hold open (default {DEFAULT_LIMITS.max_connections})")
    return gate


def _caps_options(command: argparse.ArgumentParser, whose: str) -> None:
    """The job caps a student's writes stop at (echomq_viz.redis_side.caps; pair them with
    maxmemory and noeviction: docs/sharing-a-redis.md)."""
    command.add_argument("--max-queue-jobs", type=int, default=None, metavar="N",
                         help=f"jobs one demo queue of {whose} may hold (default 5,000)")
    command.add_argument("--max-jobs", type=int, default=None, metavar="N",
                         help=f"jobs all {whose} demo queues may hold together (default 20,000)")
