"""Notebook 01's hero, drawn in the page: the page's drawing, caption and readout
agree with Python's, a value from the page is checked against the kernel's
bounds, and "live on Redis" adds through the real script."""

from __future__ import annotations

import re

import numpy as np
import pytest

from echomq_viz.core.keys import Keys
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, priority_score
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import HeroView, add_and_compare, score_text
from page_runner import page_calls

STATES = [(1, 1), (2, 0), (6, COUNTER_MASK), (4, 2**31), (3, 123_456_789)]


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


@pytest.fixture
def dead_demo():
    """A Demo whose Redis has gone away."""
    server = RedisServer().start()
    stale = Demo("viz-test", client=server.client(socket_timeout=1, socket_connect_timeout=1))
    server.stop()
    return stale


def test_the_page_says_what_python_says_of_every_position(tmp_path):
    views = [HeroView(None, priority=p, counter=c) for p, c in STATES]
    states = [view.figure.get_state() for view in views]
    calls = [(name, {k: v for k, v in state.items() if not k.startswith("_")})
             for state in states for name in ("describe", "readout", "still")]
    results = page_calls("hero", calls, tmp_path)
    for view, (described, readout, svg) in zip(views, zip(*[iter(results)] * 3)):
        assert described == view.describe()
        assert re.sub(r"<[^>]+>", "", readout) == view.readout_text()
        assert svg.startswith("<svg") and 'width="800"' in svg and f"<title>{view.describe()}</title>" in svg


def test_the_drawn_dot_sits_where_the_score_puts_it(tmp_path):
    """The dot's height is the score in units of 2³², on the axis the page draws."""
    svgs = page_calls("hero", [("still", {"priority": p, "counter": c, "tiers": 6}) for p, c in STATES], tmp_path)
    heights = []
    for svg in svgs:
        (dot,) = re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)" r="7"', svg)
        ticks = {int(label): float(y) for y, label in re.findall(
            r'<text x="[\d.]+" y="([\d.]+)"[^>]*text-anchor="end"[^>]*>(\d)</text>', svg)}
        per_tier = ticks[1] - ticks[2]
        heights.append(ticks[1] - float(dot[1]))
        assert per_tier > 0
    for (p, c), height in zip(STATES, heights):
        assert height / per_tier + 1 == pytest.approx(priority_score(p, c) / TIER_SPAN, abs=0.01)


def test_hero_readout_text_is_the_score_in_every_base():
    hero = HeroView(None, priority=3, counter=2**31)
    text = hero.readout_text()
    assert "0x00000003_80000000" in text and f"{priority_score(3, 2**31):,}" in text
    bits = format(priority_score(3, 2**31), "064b")
    assert text.splitlines()[-1].split("= ")[1] == bits[:32] + " " + bits[32:]
    assert text == score_text(3, 2**31)


@pytest.mark.parametrize("moves, error, fragment", [
    ({"priority": 99}, ValueError, "priority must be in 1..6, got 99"),
    ({"priority": 0}, ValueError, "priority must be in 1..6"),
    ({"counter": 2**32}, ValueError, "counter must be in 0..4,294,967,295"),
    ({"priority": 2, "counter": -1}, ValueError, "counter"),  # the good priority is not applied either
    ({"priority": True}, TypeError, "bool"),
    ({"counter": 5.0}, TypeError, "float"),
])
def test_hero_set_refuses_what_no_slider_can_show_and_changes_nothing(demo, keyspace, moves, error, fragment):
    hero = HeroView(demo, priority=3, counter=7)
    hero.switch_live(True)
    before, readout = keyspace(), hero.readout_text()
    with pytest.raises(error, match=fragment) as info:
        hero.set(**moves)
    assert len(str(info.value).splitlines()) == 1
    assert (hero.figure.priority, hero.figure.counter) == (3, 7) and hero.readout_text() == readout
    assert keyspace() == before


@pytest.mark.parametrize("sent, line", [
    ({"priority": 7}, "refused priority 7: it must be a whole number in 1..6"),
    ({"priority": 0}, "refused priority 0: it must be a whole number in 1..6"),
    ({"counter": 2**32}, "refused counter 4294967296: it must be a whole number in 0..4,294,967,295"),
    ({"counter": -1}, "refused counter -1"),
    ({"counter": 10**30}, "refused counter"),
    ({"counter": 7.5}, "refused counter 7.5: not a value it can take"),
    ({"priority": "three"}, "refused priority 'three': not a value it can take"),
    ({"live_answer": "x" * 100}, "refused live_answer: only the kernel writes it"),
    # what the page's controls never move, the kernel alone writes: the bound priority is held to,
    # whether Redis can be asked, Redis's answer, the status line
    ({"tiers": 10**9}, "refused tiers: only the kernel writes it"),
    ({"live_enabled": False}, "refused live_enabled: only the kernel writes it"),
    ({"status": ""}, "refused status: only the kernel writes it"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_in_one_line(demo, keyspace, sent, line):
    hero = HeroView(demo, priority=3, counter=7).switch_live(True)
    before = keyspace()
    hero.figure.set_state(sent)  # what a message from the page does, whatever the page's own bounds
    assert (hero.figure.priority, hero.figure.counter) == (3, 7)
    assert hero.figure.status.startswith(line) and "\n" not in hero.figure.status
    assert keyspace() == before  # nothing was added for the refused value
    hero.figure.set_state({"counter": 8})  # the next good value ends the refusal
    assert hero.figure.status == "" and hero.figure.counter == 8


def test_hero_set_takes_numpy_integers(demo):
    hero = HeroView(demo, priority=np.int64(2), counter=np.uint32(5))
    hero.set(priority=np.int8(4), counter=np.uint64(2**32 - 1))
    assert (hero.figure.priority, hero.figure.counter) == (4, 2**32 - 1)
    assert type(hero.figure.priority) is int and type(hero.figure.counter) is int
    assert hero.add_on_redis()[1] == priority_score(4, 2**32 - 1)


@pytest.mark.parametrize("priority, counter", [(1, 1), (6, COUNTER_MASK), (2, 0), (4, 2**31)])
def test_hero_live_adds_through_the_script_and_agrees(demo, r, priority, counter):
    hero = HeroView(demo, priority=1, counter=1)
    hero.set(priority=priority, counter=counter)
    job_id, stored = hero.add_on_redis()
    assert stored == priority_score(priority, counter)
    assert r.zscore(Keys.prioritized(demo.ctx), job_id) == stored
    assert "equal" in hero.live_text and f"{int(stored):,}" in hero.live_text
    assert hero.figure.live_answer == {"job_id": job_id, "priority": priority, "counter": counter,
                                       "stored": str(priority_score(priority, counter))}
    assert add_and_compare(demo, priority, counter).endswith("equal")


def test_live_adds_a_job_for_each_position_the_page_sends_and_none_when_off(demo):
    hero = HeroView(demo)
    hero.set(counter=9)  # off: the page's business alone
    assert demo.entries() == []
    hero.switch_live(True)  # switching on adds the job where the view stands
    hero.figure.set_state({"counter": 77})  # a position the page sends while live
    assert [e.counter for e in demo.entries()] == [9, 77]
    hero.switch_live(False)
    hero.figure.set_state({"counter": 78})
    assert len(demo.entries()) == 2 and hero.live_text == ""
    # switching on after a drag: one message with both positions and the switch adds one job
    hero.figure.set_state({"priority": 5, "counter": 79, "live": True})
    assert [(e.priority, e.counter) for e in demo.entries()][2:] == [(5, 79)]


def test_hero_without_demo_has_no_live_switch():
    hero = HeroView(None)
    assert hero.figure.live_enabled is False
    with pytest.raises(RuntimeError, match="made without a Demo"):
        hero.switch_live(True)


def test_the_kernel_answers_the_pages_question_whether_it_listens():
    hero = HeroView(None)
    sent = []
    hero.figure.send = sent.append
    hero.figure._answer(hero.figure, {"kind": "ping"}, [])
    hero.figure._answer(hero.figure, {"kind": "something else"}, [])
    assert sent == [{"kind": "pong"}]


@pytest.mark.slow
def test_unreachable_redis_is_one_line_in_the_view(dead_demo):
    hero = HeroView(dead_demo)
    hero.switch_live(True)  # must not raise out of the callback
    assert hero.status.text.startswith("error: ") and hero.figure.status == hero.status.text
    assert len(hero.status.text.splitlines()) == 1 and len(hero.status.text) < 260
    assert "Traceback" not in hero.figure.status
    hero.switch_live(False)
    hero.set(counter=5)  # the figure still works and the error clears
    assert hero.status.text == "" and hero.figure.status == ""


def test_the_kernel_echoes_nothing_back_and_sends_a_refused_value_back_as_an_update():
    """The page keeps the moves it has not sent yet: an echo of an earlier send would move
    it back (seen as a live view that lost its last position under load)."""
    import ipywidgets.widgets.widget as widget

    assert widget.JUPYTER_WIDGETS_ECHO  # as in JupyterLab's kernels
    hero = HeroView(None, priority=3, counter=7)
    sent = []
    hero.figure._send = lambda msg, buffers=None: sent.append(msg)
    hero.figure.set_state({"counter": 8})
    assert [msg for msg in sent if msg.get("method") == "echo_update"] == []
    hero.figure.set_state({"priority": 99})  # refused: the page is told the value stands at 3
    assert any(msg.get("method") == "update" and msg["state"].get("priority") == 3 for msg in sent), sent


def test_a_message_whose_add_is_refused_adds_nothing_with_its_other_values(demo):
    """Switching live on after a drag sends both positions and the switch in one message: when
    its add is refused (the lease lapsed: "nothing was done"), the message's other values do
    not add the job after all, on the fresh queue; the reader's next act does."""
    from echomq_viz.redis_side.demo_keys import lease_key

    hero = HeroView(demo, priority=1, counter=5)
    lapsed = demo.queue
    demo.client.delete(lease_key(demo.owner))  # as if the kernel slept past its lease
    hero.figure.set_state({"priority": 2, "counter": 9, "live": True})
    assert "LeaseLost" in hero.status.text and "\n" not in hero.status.text
    assert demo.queue != lapsed and demo.entries() == []  # the fresh queue: nothing added by that message
    hero.figure.set_state({"counter": 10})  # the next move adds, on the fresh queue
    assert [entry.job_id for entry in demo.entries()] == ["1"] and hero.status.text == ""
