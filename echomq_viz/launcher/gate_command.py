"""``echomq-viz gate``: the fair gate (:mod:`echomq_viz.redis_side.gate`) in the foreground.

An operator runs it next to a course's shared Redis and hands students URLs
that name the gate (``echomq-viz acl add NAME --gate HOST:PORT``). It listens
on loopback unless ``--host`` names another address of this machine; it
starts only in front of a Redis that wants a login. One line says where it
listens and what each user gets; Ctrl-C, SIGTERM or SIGHUP stops it.
"""

from __future__ import annotations

import argparse
import sys

from echomq_viz.core.redaction import first_line_redacted, url_passwords
from echomq_viz.launcher import exposure
from echomq_viz.launcher.operator_commands import named_url
from echomq_viz.redis_side._process import StopSignals
from echomq_viz.redis_side.gate import DEFAULT_LIMITS, GateLimits, GateThread
from echomq_viz.redis_side.server import redact_url

__all__ = ["cmd_gate"]


def cmd_gate(args: argparse.Namespace) -> int:
    url = named_url("gate", args)
    if url is None:
        return 2
    if args.url and url_passwords(args.url):  # REDIS_URL is the process's own; a command line is everyone's
        print("echomq-viz gate: leave the password out of --url: the gate needs only Redis's address (each student "
              "logs in as themselves), and every user of this machine can read a command's arguments (ps)",
              file=sys.stderr)
        return 2
    problem = exposure.listen_problem(args.host)
    if problem:
        print(f"echomq-viz gate: cannot listen on {args.host}: {problem}", file=sys.stderr)
        return 2
    try:
        limits = GateLimits(rate=args.rate, burst=args.burst, max_connections=args.max_connections,
                            max_clients=DEFAULT_LIMITS.max_clients)
        gate = GateThread(url, host=args.host, port=args.port, limits=limits).start()
    except (ValueError, TypeError, OSError) as exc:  # a bad URL or limit, a Redis open to all, a port taken
        print(f"echomq-viz gate: {first_line_redacted(exc, url) or type(exc).__name__}", file=sys.stderr)
        return 2
    beyond = exposure.off_loopback(args.host)
    reach = (f" (beyond this machine: {beyond}; the students' passwords cross the network in clear text, as "
             "they would to Redis itself)" if beyond else "")
    with StopSignals() as stop:
        try:
            print(f"echomq-viz gate: students reach {redact_url(url)} through {args.host}:{gate.port}{reach}, each "
                  f"Redis user at most {limits.rate} commands a second ({limits.burst} at once), one at a time per "
                  f"connection, {limits.max_connections} connections; Ctrl-C stops it", flush=True)
            stop.wait()
        finally:
            gate.stop()
    print("echomq-viz gate: stopped", flush=True)
    return 0
