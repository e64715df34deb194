"""How the launcher hears a stop (``redis_side._process.StopSignals``): a signal that lands at
any point of its wait is heard, and never hangs the process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from echomq_viz.redis_side._process import STOP_SIGNALS, StopSignals

# A stop signal sent to itself at the n-th traced event of a wait, for every n up to 24: each
# point of the wait's loop (about five events a turn), its sleep included, several times over. A
# handler that took a lock the main thread held there (threading.Event.set, inside Event.wait or
# Event.clear) would hang this process for ever. It prints how soon each signal was heard.
EVERY_POINT_OF_THE_WAIT = textwrap.dedent(
    """
    import os, signal, sys, time
    from echomq_viz.redis_side._process import StopSignals

    for n in range(1, 25):
        events, sent = 0, None

        def tracer(frame, event, arg):
            global events, sent
            events += 1
            if events == n:
                sent = time.monotonic()
                os.kill(os.getpid(), signal.SIGINT)
            return tracer

        with StopSignals() as stop:
            sys.settrace(tracer)
            heard = stop.wait(5)
            sys.settrace(None)
            print(n, heard, stop.received == [signal.SIGINT], round(time.monotonic() - sent, 3), flush=True)
    """
)


@pytest.mark.slow  # a process of its own
def test_a_stop_signal_at_any_point_of_the_wait_is_heard_and_never_hangs():
    run = subprocess.run([sys.executable, "-c", EVERY_POINT_OF_THE_WAIT], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [line.split() for line in run.stdout.splitlines()]
    assert [int(row[0]) for row in rows] == list(range(1, 25))
    for n, heard, only_it, seconds in rows:
        assert heard == "True" and only_it == "True", f"signal at event {n}: heard {heard}, received only it {only_it}"
        assert float(seconds) < 1.0, f"signal at event {n}: heard {seconds} s after it was sent"


def test_the_handlers_before_come_back_and_a_wait_without_a_stop_times_out():
    before = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    with StopSignals() as stop:
        assert all(signal.getsignal(signum) == stop._record for signum in STOP_SIGNALS)
        assert stop.wait(0.1) is False and stop.received == []
        stop._record(signal.SIGTERM, None)  # as Python calls it when one comes
        assert stop.wait(0.1) is True and stop.wait(0.1, heard=1) is False
    assert {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} == before
