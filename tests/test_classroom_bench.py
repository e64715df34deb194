"""The classroom load generator (benchmarks/classroom.py) against a real
``echomq-viz app``: it speaks the kernel protocol the way Voila's page does,
measures frames, and tells a student's own Redis results from anyone else's.
Timings are reported by the benchmark, never asserted here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_classroom():
    spec = importlib.util.spec_from_file_location("classroom_bench", ROOT / "benchmarks" / "classroom.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


classroom = _load_classroom()


def test_frames_are_framed_as_jupyter_server_reads_them():
    from jupyter_server.services.kernels.connection.base import (
        deserialize_msg_from_ws_v1,
        serialize_msg_to_ws_v1,
    )

    frame = classroom.encode_message("s1", "comm_msg", {"comm_id": "c1", "data": {"method": "update"}})
    channel, parts = deserialize_msg_from_ws_v1(frame)
    assert channel == "shell"
    assert json.loads(parts[0])["msg_type"] == "comm_msg"
    assert json.loads(parts[3]) == {"comm_id": "c1", "data": {"method": "update"}}

    reply = serialize_msg_to_ws_v1([b'{"msg_type": "comm_msg"}', b"{}", b"{}", b'{"comm_id": "c2"}', b"\x89PNG"],
                                   "iopub")
    assert classroom.decode_message(reply) == ("iopub", {"msg_type": "comm_msg"}, {"comm_id": "c2"}, [b"\x89PNG"])


def _student_with_sliders(priority: int, counter: int):
    record = classroom.Record()
    student = classroom.Student(0, "http://127.0.0.1:1", record)
    student.own = {"priority": priority, "counter": counter}
    return student, record


def _result(job_id: str, stored: int, computed: int) -> str:
    verdict = "equal" if stored == computed else "DIFFERENT"
    return f"job {job_id} via addPrioritizedJob-9: Redis stored {stored:,}, Python computed {computed:,}: {verdict}"


def test_a_students_own_redis_results_are_not_crosstalk():
    student, record = _student_with_sliders(3, 123_456)
    score = 3 * 2**32 + 123_456
    student._check_press(_result("7", score, score))
    student._check_press(_result("8", score, score))
    assert record.crosstalk == [] and record.errors == []


@pytest.mark.parametrize("second, why", [
    (("9", 3 * 2**32 + 123_456, 3 * 2**32 + 123_456), "job id 9 after this student's job 7"),  # someone else's add
    (("1", 3 * 2**32 + 123_456, 3 * 2**32 + 123_456), "job id 1 after this student's job 7"),  # a reset
    (("8", 3 * 2**32 + 5, 3 * 2**32 + 123_456), "Redis stored"),  # pc moved by another kernel
    (("8", 2 * 2**32 + 1, 2 * 2**32 + 1), "Python's score"),  # sliders this student never set
])
def test_results_that_are_not_the_students_own_are_crosstalk(second, why):
    student, record = _student_with_sliders(3, 123_456)
    score = 3 * 2**32 + 123_456
    student._check_press(_result("7", score, score))
    student._check_press(_result(*second))
    assert len(record.crosstalk) == 1 and why in record.crosstalk[0][1]


def test_the_app_logs_failures_are_picked_out():
    text = "\n".join([
        "[Voila] Voila is running at: http://127.0.0.1:8866/",
        "[Voila] Kernel started: 5f1c",
        "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:55131')",
        "[Voila] ERROR | Uncaught exception GET /voila/render/01.ipynb",
        "Traceback (most recent call last):",
        '  File "handler.py", line 9, in get',  # a traceback's frames are left out
        "    raise RuntimeError(message)",
        "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:55131')",  # said once
        "RuntimeError: Kernel died before replying to kernel_info",
        "[Voila] 200 GET /voila/static/voila.js (127.0.0.1) 1.20ms",
        "[Voila] Culling kernels with idle durations > 10 seconds at 5 second intervals ...",
    ])
    assert classroom.log_problems(text) == [
        "zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:55131')",
        "[Voila] ERROR | Uncaught exception GET /voila/render/01.ipynb",
        "RuntimeError: Kernel died before replying to kernel_info",
    ]
    assert classroom.log_problems(text, limit=2) == classroom.log_problems(text)[:2]
    later = "[Voila] WARNING | Timeout waiting for IOPub output\n[Voila] Culling 'idle' kernel 'python3' (5f1c)"
    assert classroom.log_problems(later) == later.split("\n")
    assert classroom.log_problems("[Voila] Kernel started\n[Voila] 200 GET /voila") == []


def test_a_page_without_a_kernel_says_what_it_showed_instead():
    page = ("<html><head><title>Voila: 01-one-score-two-keys</title><style>p {}</style>"
            "<script>var kernelId;</script></head><body><h2>Kernel error</h2><p>Timeout &amp; gone</p></body></html>")
    said = classroom._page_says(page)
    assert "title 'Voila: 01-one-score-two-keys'" in said and "Kernel error Timeout & gone" in said
    assert "var kernelId" not in said and "p {}" not in said
    assert classroom._page_says("") == "0 bytes; text ''"


@pytest.mark.parametrize("text", ["", "a", "0,x", "-1"])
def test_app_cpus_that_are_not_cpu_numbers_are_one_line(text, capsys):
    with pytest.raises(SystemExit) as exit_:
        classroom.main(["--app-cpus", text])
    assert exit_.value.code == 2
    assert "--app-cpus must be CPU numbers separated by commas (e.g. 0), got" in capsys.readouterr().err


@pytest.mark.skipif(not classroom.CAN_PIN, reason="CPU affinity is Linux's")
def test_app_cpus_must_leave_a_cpu_to_the_students_and_be_this_processs():
    mine = classroom.my_cpus()
    for cpus in (set(mine), {max(mine) + 1}):
        with pytest.raises(ValueError, match=r"^app CPUs must be some of this process's CPUs .*, leaving one"):
            classroom.bench_classroom(1, [], app_cpus=cpus)  # refused before any app starts
    assert classroom.my_cpus() == mine


@pytest.mark.slow
def test_two_students_on_a_real_app(monkeypatch):
    # The app's kernels take an 8 s lease (from the environment they inherit),
    # so the pause step's 16 s, twice the lease, lets the first one's lapse.
    monkeypatch.setenv("ECHOMQ_VIZ_LEASE_SECONDS", "8")
    mine = sorted(classroom.my_cpus())
    # the app on one CPU, the students on the others (where CPU affinity can be set)
    app_cpus = {mine[0]} if len(mine) > 1 and classroom.CAN_PIN else None
    results = classroom.bench_classroom(2, [], seconds=12, log=lambda line: None, pause_s=16, app_cpus=app_cpus)
    step = results["classroom_steps"][-1]
    if app_cpus:  # the server, the kernels and Redis ran on that CPU alone; this process has all of its own back
        assert step["app_cpus"] == [mine[0]] and results["classroom_cpus"] == {"app": [mine[0]], "students": mine[1:]}
        assert sorted(classroom.my_cpus()) == mine
    assert results["classroom_sessions"] == 2
    assert step["moves"] > 0 and results["classroom_p95_ms"] is not None  # frames were measured
    assert step["presses"] > 0  # the Redis switch was pressed and its result read
    assert results["classroom_errors"] == 0, results["classroom_error_samples"]
    assert results["classroom_kernel_rss_mb"] is not None
    assert results["classroom_leftover_processes"] == 0  # the app stopped everything it started
    # Each kernel has a demo queue of its own: one student's reset and adds
    # never show in the other's job ids, however their presses interleave.
    assert results["classroom_crosstalk"] == 0, results["classroom_crosstalk_samples"]
    assert results["classroom_app_log_problems"] == []  # the app's log was read, and said nothing failed
    # Student 0's kernel, stopped past its lease while clean ran, says so in one
    # line on its first press; its second press works on a fresh queue; the
    # other student went on without an error or cross-talk meanwhile.
    assert results["classroom_pause_one_clear_line"] == 1, results["classroom_pause_resumed_lines"]
    assert results["classroom_pause_second_press_ok"] == 1
    assert results["classroom_pause_others_errors"] == 0, results["classroom_pause_samples"]
    assert results["classroom_pause_crosstalk"] == 0, results["classroom_pause_samples"]
