"""The app's kernel (``python -m echomq_viz.launcher._app_kernel``), started from the
app's kernel spec as Voila starts a visitor's: no debugger, no subshells,
printed text still reaches the page whole and before "idle" with the
cheaper flush, and a shutdown's last status does not end in a traceback."""

from __future__ import annotations

import json
import subprocess

import pytest
import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from echomq_viz.launcher._app_kernel import AppIOPubThread
from echomq_viz.launcher._kernel_channels import private_kernel_config
from echomq_viz.launcher.app_template import TEMPLATE_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client():
    specs = KernelSpecManager(kernel_dirs=[str(TEMPLATE_ROOT / "kernels")])
    with private_kernel_config() as config:  # on Unix sockets in a private folder, as the app's
        manager = KernelManager(kernel_name="python3", kernel_spec_manager=specs, config=config)
        manager.start_kernel(stderr=subprocess.DEVNULL)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=120)
            yield client
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def run(client, code: str) -> list[tuple[str, object]]:
    """Every IOPub message ``code`` brings, as (type, what it says), up to its idle status."""
    msg_id = client.execute(code)
    seen = []
    while True:
        msg = client.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        said = {"stream": lambda: (content["name"], content["text"]),
                "status": lambda: content["execution_state"],
                "error": lambda: content["ename"]}.get(kind, lambda: None)()
        seen.append((kind, said))
        if kind == "status" and said == "idle":
            return seen


def printed(seen, name: str = "stdout") -> str:
    return "".join(said[1] for kind, said in seen if kind == "stream" and said[0] == name)


def test_the_kernel_has_no_debugger(client):
    client.kernel_info()
    reply = client.get_shell_msg(timeout=60)
    assert reply["msg_type"] == "kernel_info_reply"
    assert "debugger" not in reply["content"].get("supported_features", [])  # ipykernel 7's way to say it
    assert printed(run(client, "import sys; print(sys.modules.get('debugpy', 'absent'))")) == "None\n"


def test_text_printed_from_any_thread_arrives_whole_before_idle(client):
    code = """
import sys, threading
print("first")
sys.stderr.write("to stderr\\n")
worker = threading.Thread(target=lambda: print("from a thread"))
worker.start(); worker.join()
sys.stdout.flush()
print("last", end="")
"""
    seen = run(client, code)
    assert seen[-1] == ("status", "idle")
    assert printed(seen) == "first\nfrom a thread\nlast"
    assert printed(seen, "stderr") == "to stderr\n"
    assert "error" not in [kind for kind, _ in seen]


def test_a_flush_with_nothing_written_does_not_wait_on_the_io_thread(client):
    # ipykernel flushes both streams after every message; a slider move prints
    # nothing, and each of those flushes used to be a round trip to the I/O thread.
    code = """
import json, sys
scheduled = []
thread = sys.stdout.pub_thread
original = thread.schedule
thread.schedule = lambda f: (scheduled.append(f), original(f))[1]
try:
    sys.stdout.flush(); sys.stderr.flush()
    idle = len(scheduled)
    sys.stdout.write("x")
    sys.stdout.flush()
    after_write = len(scheduled)
finally:
    thread.schedule = original
print(json.dumps([type(sys.stdout).__name__, idle, after_write]))
"""
    name, idle, after_write = json.loads(printed(run(client, code)).split("x", 1)[-1])
    assert name == "AppOutStream"
    assert idle == 0
    assert after_write >= 2  # written text takes ipykernel's own path: flush, then wait for it


def test_a_flush_while_the_io_thread_is_sending_waits_for_that_text(client):
    # The I/O thread has taken the buffers (the pending flag is clear, the
    # buffers empty) but not yet sent them: a flush must still wait, or the
    # "idle" status could overtake the text.
    code = """
import json, sys, threading, time
out = sys.stdout
taken, release = threading.Event(), threading.Event()
original = out._flush_buffers

def held():
    pieces = list(original())  # the buffers are taken here
    taken.set()
    release.wait(10)
    yield from pieces

out._flush_buffers = held
try:
    out.write("held text\\n")
    assert taken.wait(10), "the I/O thread never flushed"
    threading.Timer(0.5, release.set).start()
    started = time.perf_counter()
    out.flush()
    waited = time.perf_counter() - started
finally:
    out._flush_buffers = original
    release.set()
print(json.dumps(round(waited, 2)))
"""
    seen = run(client, code)
    text = printed(seen)
    assert text.startswith("held text\n"), seen
    assert float(text.split("\n")[1]) >= 0.4  # it waited for the I/O thread to send the text
    assert "error" not in [kind for kind, _ in seen]


def test_the_main_thread_reads_the_shell_channel_and_cells_may_await(client):
    # No subshells: no thread of ipykernel's own between the shell socket and
    # the main thread, and a kernel that says it has none.
    client.kernel_info()
    reply = client.get_shell_msg(timeout=60)
    assert "kernel subshells" not in reply["content"].get("supported_features", [])
    seen = run(client, "import threading; print(sorted(t.name for t in threading.enumerate()))")
    assert "Shell channel" not in printed(seen) and "MainThread" in printed(seen)
    # a top-level await is the one path that asks for the shell channel's parent thread
    seen = run(client, "import asyncio\nawait asyncio.sleep(0)\nprint('awaited')")
    assert printed(seen) == "awaited\n" and "error" not in [kind for kind, _ in seen]


def test_the_kernels_io_thread_is_the_apps(client):
    assert printed(run(client, "import sys; print(type(sys.stdout.pub_thread).__name__)")) == "AppIOPubThread\n"


def test_a_status_sent_while_the_io_thread_stops_is_dropped_and_any_other_failure_raised():
    # The race seen in the app's log: the control thread found the I/O thread
    # alive, the main thread then stopped it and closed its event pipes, and
    # the wake-up failed with ENOTSOCK. The window is held open here by an
    # I/O thread that still says it is alive after its stop.
    context = zmq.Context()
    try:
        for stopped in (True, False):
            io_thread = AppIOPubThread(context.socket(zmq.PUB), pipe=True)
            io_thread.start()
            io_thread.schedule(lambda: None)  # this thread's event pipe exists now
            if stopped:
                io_thread.stop()  # joins the thread and closes every event pipe
            else:
                for pipe in io_thread._event_pipes.values():
                    pipe.close()  # the same closed pipe, with nobody stopping
            io_thread.thread.is_alive = lambda: True
            try:
                if stopped:
                    io_thread.schedule(lambda: None)  # dropped, no traceback
                else:
                    with pytest.raises(zmq.ZMQError):
                        io_thread.schedule(lambda: None)
            finally:
                del io_thread.thread.is_alive  # the thread's own answer again, for stop() here and at exit
            io_thread.stop()
            io_thread.close()
    finally:
        context.destroy(linger=0)  # closes any socket a failure above left open
