"""Notebook 03's consume view, drawn in the page: the page's drawing, caption,
readout and verdict agree with Python's at every step; before the first pop
nothing it shows tells which job comes out first; a value from the page the
kernel does not take is refused in one line with nothing written; and what it
shows is what Redis holds and what the consume script handed out."""

from __future__ import annotations

import re

import pytest

from echomq_viz.core.keys import Keys
from echomq_viz.core.score import priority_score
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.widgets import ConsumeView, fill_queue, queue_table
from page_runner import page_calls, svg_problems

PRIORITIES = seeded_priorities(seed=3, count=12, tiers=(1, 2, 3))  # the notebook's batch
CALLS = ("describe", "readout", "verdict", "poppedText", "still")


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test-consume", client=r)


def _page(view, states: list[dict], tmp_path) -> list[tuple]:
    calls = [(name, state) for state in states for name in CALLS]
    return list(zip(*[iter(page_calls("consume", calls, tmp_path))] * len(CALLS)))


def test_the_page_says_what_python_says_at_every_step(demo, tmp_path):
    view = ConsumeView(demo, priorities=PRIORITIES, waiting=1)
    states, python = [], []
    for act in [lambda: None, lambda: view.predict("4"), view.step, view.step, view.drain, view.step]:
        act()
        states.append(_state(view))
        python.append((view.describe(), view.readout_text(), view.verdict_text(), view.popped_text()))
    for (described, readout, verdict, popped, svg), mine in zip(_page(view, states, tmp_path), python):
        assert (described, readout, verdict, popped) == mine
        assert f"<title>{described}</title>" in svg and svg_problems(svg) == []
        assert "Your guess:" in svg and "Pop one" in svg and "Fresh batch" in svg  # the still's drawn controls
    assert python[2][2] == ("You guessed job 4: not first. Job 13 came out first, from the wait list, "
                            "which the script reads before the sorted set.")
    assert python[3][0].endswith("2 popped, the last job 1 (priority 1), the smallest score left, "
                                 "4,294,967,297 (tier 1, counter 1), the wait list being empty.")
    assert python[4][0].startswith("Queue strip: empty. Popped strip: 13 popped")
    assert python[-1][1].endswith("pc: deleted (the last consume found the wait list and the set empty)")
    assert view.status.text == "the consume script found no job; it deleted pc"


def test_before_the_first_pop_nothing_shown_names_the_next_job(demo, tmp_path):
    view = ConsumeView(demo, priorities=PRIORITIES, waiting=1)
    first = view.expected_order()[0]
    assert first == "13" and not view.answered()
    [(described, readout, verdict, _, svg)] = _page(view, [_state(view)], tmp_path)
    assert verdict == "" and "next" not in described and "next" not in svg and "first" not in described
    assert described == ("Queue strip: 13 jobs in arrival order (by job id), not the order they come out: "
                         "12 in the sorted set, 1 on the wait list. Popped strip: nothing popped yet.")
    # the strip, the model and the table: by job id, 1 to 13, the wait-list job last where it arrived
    drawn = re.findall(r">job (\d+)</text>", svg)
    assert drawn == [str(n) for n in range(1, 14)] == [job for job, _ in view.figure.queued]
    assert "in arrival order (by job id), not the order they come out" in svg
    assert "drawn thick" not in svg and 'stroke-width="4"' not in svg
    rows = [line.split()[0] for line in view.table_text().splitlines()[1:-1]]
    assert rows == [str(n) for n in range(1, 14)]
    # once popped, the job that came out is drawn thick and named, with why
    view.step()
    [(described, _, verdict, _, svg)] = _page(view, [_state(view)], tmp_path)
    assert "1 popped, the last job 13 (wait list), from the wait list" in described
    assert svg.count('stroke-width="4"') == 1 and "last out, drawn thick: job 13 (wait list)" in svg
    assert verdict.startswith("No guess made: job 13 came out first")


def test_the_view_shows_what_redis_holds_and_pops_in_its_order(demo, r):
    view = ConsumeView(demo, priorities=[2, 1, 2], waiting=1)
    queued = {job_id: p for job_id, p in view.figure.queued}
    assert queued == {e.job_id: e.priority for e in demo.entries()} | {job: 0 for job in demo.waiting()}
    assert view.figure.pc == int(r.get(Keys.pc(demo.ctx))) == 3
    lines = view.table_text().splitlines()
    assert lines[2].split()[:4] == ["2", f"{priority_score(1, 2):,}", "1", "2"] and lines[-1] == "pc = 3"
    assert lines[4].split() == ["4", "-", "-", "-", "wait", "list"]
    view.figure._handle_custom_msg({"kind": "pop"}, [])  # the page's Pop one
    view.figure._handle_custom_msg({"kind": "drain"}, [])  # and Drain
    assert [job for job, *_ in view.figure.popped] == [job.id for job in view.popped] == view.expected_order()
    assert view.figure.queued == [] and view.figure.pc is None and not r.exists(Keys.pc(demo.ctx))
    assert view.answered() and view.status.text == ""
    view.figure.guess = "2"
    view.figure._handle_custom_msg({"kind": "refill"}, [])  # Fresh batch: asks again
    assert view.figure.popped == [] and view.figure.guess == "" and len(demo.entries()) == 3
    assert not view.answered() and queue_table(demo) == view.table_text()


@pytest.mark.parametrize("sent", [{"guess": "14"}, {"guess": "0"}, {"guess": "job 1"}, {"guess": 3},
                                  {"queued": [["1", 1]]}, {"popped": []}, {"pc": 0}, {"ids": ["99"]}])
def test_a_value_from_the_page_the_kernel_does_not_take_is_refused_in_one_line(demo, keyspace, sent):
    view = ConsumeView(demo, priorities=[3, 1, 2], waiting=1).predict("2")
    before, shown = keyspace(), _state(view)
    view.figure.set_state(sent)  # what a message from the page does
    [(name, value)] = sent.items()
    assert view.figure.status.startswith(f"refused {name}") and "\n" not in view.figure.status
    assert _state(view) == {**shown, "status": view.figure.status} and keyspace() == before
    view.figure.set_state({"guess": "4"})  # a good one ends the refusal
    assert view.guess == "4" and view.figure.status == ""


@pytest.mark.parametrize("message", [{"kind": "pop all"}, {"kind": 1}, {"kind": None}, {"do": "pop"},
                                     {"kind": "pop" * 300_000}])
def test_a_message_that_is_no_button_runs_nothing(demo, keyspace, message):
    view = ConsumeView(demo, priorities=[3, 1], waiting=0)
    before = keyspace()
    view.figure._handle_custom_msg(message, [])
    assert view.status.text.startswith("refused the page's message") and "\n" not in view.status.text
    assert "pop, drain, refill" in view.status.text and keyspace() == before and view.popped == []
    assert len(view.status.text) < 200  # a crafted message's megabyte quoted in 40 characters


def test_the_guess_from_code_is_checked(demo):
    view = ConsumeView(demo, priorities=[3, 1], waiting=0)
    for bad in ("3", "", 1, None):
        with pytest.raises(ValueError, match="'1'..'2'"):
            view.predict(bad)
    assert view.predict("2").verdict_text() == ""
    view.step()
    assert view.verdict_text() == ("You guessed job 2: right. Job 2 came out first, the smallest score left, "
                                   "4,294,967,298 (tier 1, counter 2), the wait list being empty.")


def test_a_bad_batch_writes_nothing(demo, keyspace):
    fill_queue(demo, [2, 1], waiting=1)
    before = keyspace()
    with pytest.raises(ValueError, match="1..40 jobs"):
        ConsumeView(demo, priorities=[1] * 41)
    with pytest.raises(ValueError, match="waiting"):
        ConsumeView(demo, priorities=[1], waiting=11)
    assert keyspace() == before
