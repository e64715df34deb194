"""The classroom load generator (benchmarks/classroom.py) against a real
``echomq-viz app``: it speaks the kernel protocol the way Voila's page does,
drives the hero's page model, times Redis's answers to live moves, and tells
a student's own answers from anyone else's.
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

    frame = classroom.encode_message("s1", "comm_msg", {"comm_id": "c1", "data": {"method": "update"}},
                                     msg_id="m1")
    channel, parts = deserialize_msg_from_ws_v1(frame)
    assert channel == "shell"
    assert json.loads(parts[0])["msg_type"] == "comm_msg" and json.loads(parts[0])["msg_id"] == "m1"
    assert json.loads(parts[3]) == {"comm_id": "c1", "data": {"method": "update"}}

    reply = serialize_msg_to_ws_v1([b'{"msg_type": "status"}', b'{"msg_id": "m1"}', b"{}",
                                    b'{"execution_state": "idle"}', b"\x89PNG"], "iopub")
    assert classroom.decode_message(reply) == (
        "iopub", {"msg_type": "status"}, {"msg_id": "m1"}, {"execution_state": "idle"}, [b"\x89PNG"])


def test_the_hero_is_found_by_its_page_model():
    import ipywidgets

    from echomq_viz.widgets.hero import HeroFigure

    hero = HeroFigure(live_enabled=True)
    slider = ipywidgets.IntSlider()
    try:
        assert classroom.is_hero(hero.get_state())
        assert not classroom.is_hero(slider.get_state())
        assert not classroom.is_hero({**hero.get_state(), "_model_name": "IntSliderModel"})
    finally:
        hero.close()
        slider.close()


def _student_at(*positions: tuple[int, int]):
    """A student who sent these (priority, counter) positions, the last one now."""
    record = classroom.Record()
    student = classroom.Student(0, "http://127.0.0.1:1", record)
    student.model_id = "hero"
    student.recent.extend(positions)
    student.own = dict(zip(("priority", "counter"), positions[-1]))
    return student, record


def _answer(job_id: str, priority: int, counter: int, stored: int | None = None) -> dict:
    stored = priority * 2**32 + counter if stored is None else stored
    return {"job_id": job_id, "priority": priority, "counter": counter, "stored": str(stored)}


def test_a_students_own_redis_answers_are_not_crosstalk():
    student, record = _student_at((3, 123_456), (3, 99))
    student._check_answer(_answer("7", 3, 123_456))
    # one update that changed two values adds twice: two answers, one id each
    student._check_answer(_answer("8", 3, 99))
    student._check_answer(_answer("9", 3, 99))
    assert record.crosstalk == [] and record.errors == []


@pytest.mark.parametrize("second, why", [
    (_answer("9", 3, 123_456), "job id 9 after this student's job 7"),  # someone else's add
    (_answer("1", 3, 123_456), "job id 1 after this student's job 7"),  # a reset
    (_answer("8", 3, 123_456, stored=3 * 2**32 + 5), "Redis stored"),  # pc moved by another kernel
    (_answer("8", 2, 1), "which this student never sent"),  # a position from someone else's page
])
def test_answers_that_are_not_the_students_own_are_crosstalk(second, why):
    student, record = _student_at((3, 123_456))
    student._check_answer(_answer("7", 3, 123_456))
    student._check_answer(second)
    assert len(record.crosstalk) == 1 and why in record.crosstalk[0][1]


def test_an_unreadable_answer_is_an_error():
    student, record = _student_at((3, 1))
    student._check_answer({"job_id": "7", "priority": 3})
    assert record.crosstalk == [] and len(record.errors) == 1 and "unreadable Redis answer" in record.errors[0][1]


def _update(state: dict, comm_id: str = "hero") -> tuple[str, dict, dict]:
    return "comm_msg", {}, {"comm_id": comm_id, "data": {"method": "update", "state": state, "buffer_paths": []}}


def test_the_wait_ends_on_the_answer_naming_the_position_sent_or_on_a_status_error():
    import asyncio

    async def scene() -> None:
        student, record = _student_at((3, 7), (3, 8))
        loop = asyncio.get_running_loop()
        student._pending = ((3, 8), loop.create_future(), "move")
        student._on_message(*_update({"live_answer": _answer("4", 3, 7)}))  # an earlier update's answer
        assert not student._pending[1].done()
        student._on_message(*_update({"live_answer": _answer("9", 3, 8)}, comm_id="another"))  # not the hero
        assert not student._pending[1].done()
        student._on_message(*_update({"live_answer": _answer("5", 3, 8)}))
        assert student._pending[1].done() and student._pending[1].result() > 0
        assert [kind for _, kind in record.answers] == ["move", "move"] and record.crosstalk == []

        student._pending = ((3, 8), loop.create_future(), "move")
        lost = "error: LeaseLost: this kernel's lease on Redis is gone"
        student._on_message(*_update({"status": lost}))
        assert student._pending[1].result() is None  # no answer comes: the hand goes on at once
        assert [what for _, what in record.errors] == [f"student 0: the view's status: {lost}"]

        idle = loop.create_future()
        student._idle["m1"] = idle
        student._on_message("status", {"msg_id": "m1"}, {"execution_state": "idle"})
        pong = student._pong = loop.create_future()
        student._on_message("comm_msg", {}, {"comm_id": "hero", "data": {"method": "custom",
                                                                         "content": {"kind": "pong"}}})
        assert idle.done() and pong.done() and student._idle == {}

    asyncio.run(scene())


def test_a_move_with_live_off_is_counted_and_sent_nowhere():
    student, record = _student_at((1, 1))
    student.page_move()  # no websocket: it would raise if it sent anything
    assert len(record.page_moves) == 1 and record.sent == [] and student.unsent


def test_the_parts_of_the_app_are_told_apart_by_their_command_lines():
    server = "/venv/bin/python -m echomq_viz.launcher._voila /work/notebooks --Voila.ip=127.0.0.1"
    assert classroom.SERVER_COMMAND.search(server)
    assert classroom.SERVER_COMMAND.search("/usr/bin/python3 /usr/local/bin/voila notebooks")
    kernel = "/venv/bin/python -m echomq_viz.launcher._app_kernel -f /tmp/x/kernel-0b9c4a7e-5d3f-4c1e-9a7b-2f6d8e1c3a5b.json"
    assert not classroom.SERVER_COMMAND.search(kernel)
    assert classroom.KERNEL_FILE.search(kernel).group(1) == "0b9c4a7e-5d3f-4c1e-9a7b-2f6d8e1c3a5b"
    assert not classroom.SERVER_COMMAND.search("/venv/bin/python -m echomq_viz app --no-browser")


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
    # the "live" hand: live moves, presses and page-only moves all come within the step
    results = classroom.bench_classroom(2, [], seconds=12, log=lambda line: None, pause_s=16, app_cpus=app_cpus,
                                        pattern="live")
    step = results["classroom_steps"][-1]
    if app_cpus:  # the server, the kernels and Redis ran on that CPU alone; this process has all of its own back
        assert step["app_cpus"] == [mine[0]] and results["classroom_cpus"] == {"app": [mine[0]], "students": mine[1:]}
        assert sorted(classroom.my_cpus()) == mine
    assert results["classroom_sessions"] == 2
    # live updates answered by Redis, each timed; the switch on pressed and answered;
    # moves with live off counted, with nothing sent for them
    assert step["moves"] > 0 and results["classroom_p95_ms"] is not None
    assert step["presses"] > 0
    assert step["page_moves"] > 0
    assert step["messages"] >= step["moves"]
    # a live move adds one job, none where the last add already stands (a hand back where it was)
    assert 0.9 <= step["adds_per_move"] <= 1
    # what each message cost: the kernels and the server that relays every message were both found
    assert step["cpu_ms_per_move"]["kernels"] > 0 and step["cpu_ms_per_move"]["server"] > 0
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
