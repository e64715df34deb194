"""Notebook 08's views, drawn in the page: the page's drawing, caption and readout
agree with Python's for every include and every path, a value from the page
outside the kernel's bounds is refused in one line with nothing written, and
the run button's path lands on Redis where the view says."""

from __future__ import annotations

import re

import pytest

from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo
from echomq_viz.experiments.paths import LANDINGS, PATHS, ScoringPaths, scoring_scripts
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import IncludeGraphView, PathView
from page_runner import page_calls, svg_problems


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test-paths", client=r)


# -- the include graph ---------------------------------------------------------------------------


def test_the_page_says_what_python_says_of_every_include(tmp_path):
    view = IncludeGraphView()
    targets = view.figure.targets
    calls = [(name, {**_state(view), "target": target}) for target in targets
             for name in ("describe", "listing", "still")]
    results = page_calls("include_graph", calls, tmp_path)
    assert len(targets) > 20
    for target, (described, listing, svg) in zip(targets, zip(*[iter(results)] * 3)):
        view.choose(target)
        assert described == view.describe() and listing == view.listing_text()
        assert f"<title>{view.describe()}</title>" in svg and svg_problems(svg) == []
        # the still shows the menu's current choice; every script is drawn, those that reach it bold
        assert f"include: {target.removeprefix('includes/')} ▾" in svg
        bold = re.findall(r'font-weight="700"[^>]*>([^<]+)</text>', svg)
        assert sorted(n for n in bold if "-" in n) == view.scripts(), target


def test_include_graph_view_lists_what_reaches_the_chosen_include():
    view = IncludeGraphView()
    assert repr(view) == "IncludeGraphView(target='includes/getPriorityScore', scripts=5)"
    assert view.scripts() == scoring_scripts()
    assert not [name for name in view.graph if name.startswith("designs/")]  # not commands
    assert "not: addDelayedJob-6, addStandardJob-9, getCountsPerPriority-2" in view.listing_text()
    assert view.describe().endswith(", through addJobWithPriority, promoteDelayedJobs; 3 scripts do not, in grey.")
    view.choose("includes/checkKeys")  # every script checks its keys
    assert len(view.scripts()) == 8 and view.listing_text().endswith("not: none")
    assert view.describe().endswith("8 scripts reach it, in colour, directly; 0 scripts do not, in grey.")
    view.choose("includes/checkPriority")
    assert view.describe().endswith("directly or through checkDueDelayedJobs, checkStoredPriority; "
                                    "1 script does not, in grey.")


@pytest.mark.parametrize("target, error, fragment", [
    ("changePriority-7", ValueError, "getPriorityScore"), (5, TypeError, "target must be a str"),
    ("includes/nothing", ValueError, "got 'includes/nothing'"),
])
def test_include_graph_view_refuses_what_no_menu_offers(target, error, fragment):
    with pytest.raises(error, match=fragment):
        IncludeGraphView(target)
    with pytest.raises(error, match=fragment):
        IncludeGraphView().choose(target)


@pytest.mark.parametrize("sent", ["includes/nothing", "changePriority-7", 7, ""])
def test_an_include_from_the_page_the_menu_does_not_offer_is_refused_in_one_line(sent):
    view = IncludeGraphView("includes/checkKeys")
    view.figure.set_state({"target": sent})  # what a message from the page does
    assert view.target == "includes/checkKeys" and repr(view).endswith("scripts=8)")
    # a name no menu offers, or a value of the wrong kind (PageFigure.set_state)
    assert view.figure.status.startswith(f"refused target {sent!r}: ")
    assert "\n" not in view.figure.status
    view.figure.set_state({"target": "includes/getPriorityScore"})  # a good one ends the refusal
    assert view.figure.status == "" and view.scripts() == scoring_scripts()


# -- the paths -------------------------------------------------------------------------------------


def test_the_page_draws_every_run_as_python_describes_it(demo, tmp_path):
    lab = ScoringPaths(demo)
    views = [PathView(lab, path) for path in PATHS]
    fresh = [_state(view) for view in views]
    for view, guess in zip(views, [None, *LANDINGS, None, "back of its tier"]):
        if guess:
            view.predict(guess)
        view.run_on_redis()
    calls = [(name, state) for state in fresh + [_state(v) for v in views]
             for name in ("describe", "verdictText", "still")]
    results = list(zip(*[iter(page_calls("paths", calls, tmp_path))] * 3))
    for (described, verdict, svg), view in zip(results, [PathView(lab, p) for p in PATHS] + views):
        assert described == view.describe() and verdict == view.verdict_text()
        assert f"<title>{view.describe()}</title>" in svg and svg_problems(svg) == []
        assert "Run it on Redis" in svg and "Your guess:" in svg and view.figure.question.split()[0] in svg
    for (_, _, svg), view in zip(results[len(PATHS):], views):
        # the moved job is drawn thick and bold, and marked under its box in both strips
        job = view.result.job_id
        assert len(re.findall(r'stroke-width="4"', svg)) == 1 + (job in dict(view.result.queue_after)) - \
            (job not in dict(view.result.queue_before))
        assert re.findall(r'font-weight="700"[^>]*>job (\w+)</text>', svg) == [job] * svg.count('stroke-width="4"')
        assert svg.count(f"▲ job {job}") == svg.count('stroke-width="4"')


def test_the_still_shows_the_chosen_guess(demo, tmp_path):
    view = PathView(ScoringPaths(demo), "lifo").predict("front of its tier")
    (svg,) = page_calls("paths", [("still", _state(view))], tmp_path)
    assert "● front of its tier" in svg and "○ back of its tier" in svg and "● back" not in svg


def test_path_view_guess_then_run_shows_the_landing_and_the_split(demo):
    view = PathView(ScoringPaths(demo), "retry")
    assert view.guess_first and not view.answered()
    assert repr(view) == "PathView(path='retry', prediction=None, landed=None)"
    assert view.verdict_text().startswith("not run yet")
    view.predict("where it was")
    view.figure._handle_custom_msg({"kind": "run"}, [])  # the page's run button
    assert view.result.landing == "back of its tier" and view.status.text == "" and view.answered()
    assert "(tier 1, counter 8)" in view.verdict_text() and "not what Redis did" in view.verdict_text()
    assert view.figure.result["landing"] == "back of its tier" and view.figure.result["job_id"] == "1"
    view.figure.set_state({"guess": "back of its tier"})  # a second guess re-judges the same run
    assert view.verdict_text().endswith("you guessed 'back of its tier': right")
    assert repr(view) == "PathView(path='retry', prediction='back of its tier', landed='back of its tier')"
    assert view.describe().endswith("; job 1 landed at the back of its tier.")
    first = view.figure.result["run"]
    view.run_on_redis()  # the same run again still reaches the page, which waits for it
    assert view.figure.result["run"] == first + 1


def test_path_view_says_the_wait_list_landing_in_plain_words(demo):
    view = PathView(ScoringPaths(demo), "no priority")
    view.run_on_redis()
    assert view.describe().endswith("After changePriority-7: 5 (wait), 1 (p1), 2 (p1), 3 (p2), 4 (p2), "
                                    "6 (p3), 7 (p3); job 5 landed on the wait list.")


def test_the_run_agrees_with_redis(demo, r):
    view = PathView(ScoringPaths(demo), "better tier")
    run = view.run_on_redis()
    queue = [[e.job_id, e.priority] for e in demo.entries()]
    assert view.figure.result["queue_after"] == queue == [["1", 1], ["2", 1], ["5", 1], ["3", 2], ["4", 2],
                                                          ["6", 3], ["7", 3]]
    assert r.zscore(Keys.prioritized(demo.ctx), "5") == run.after.score == 2**32 + 8


@pytest.mark.parametrize("sent", ["somewhere", 3, "Back of its tier"])  # 3: refused as a wrong kind
def test_a_guess_from_the_page_that_is_no_landing_is_refused_in_one_line(demo, keyspace, sent):
    view = PathView(ScoringPaths(demo), "retry").predict("front of its tier")
    before = keyspace()
    view.figure.set_state({"guess": sent})
    assert view.prediction == "front of its tier"
    if isinstance(sent, str):
        assert "it must be one of 'where it was', 'front of its tier'" in view.figure.status
    assert view.figure.status.startswith(f"refused guess {sent!r}: ")
    assert "\n" not in view.figure.status and keyspace() == before
    view.figure.set_state({"guess": "the wait list"})
    assert view.figure.status == "" and view.prediction == "the wait list"


def test_a_long_guess_is_quoted_in_forty_characters(demo):
    view = PathView(ScoringPaths(demo), "retry")
    view.figure.set_state({"guess": "front" * 200_000})  # a crafted message: a megabyte
    assert view.figure.status.startswith("refused guess 'frontfront") and "…: it must be one of" in view.figure.status
    assert len(view.figure.status) < 200


def test_path_view_refuses_bad_arguments(demo):
    lab = ScoringPaths(demo)
    with pytest.raises(ValueError, match="same tier"):
        PathView(lab, "sideways")
    with pytest.raises(TypeError, match="ScoringPaths"):
        PathView(demo, "retry")
    with pytest.raises(ValueError, match="back of its tier"):
        PathView(lab, "retry").predict("somewhere")


@pytest.mark.slow
def test_path_view_error_is_one_line_in_the_page():
    server = RedisServer().start()
    gone = Demo("viz-test-paths", client=server.client(socket_timeout=1, socket_connect_timeout=1))
    server.stop()
    view = PathView(ScoringPaths(gone), "same tier")
    view.figure._handle_custom_msg({"kind": "run"}, [])  # must not raise out of the callback
    assert view.status.text.startswith("error: ") and view.figure.status == view.status.text
    assert len(view.status.text.splitlines()) == 1 and "Traceback" not in view.figure.status
    assert view.result is None and view.figure.result == {}
