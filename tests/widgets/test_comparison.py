"""Notebook 02's comparison, drawn in the page: the page's figure, caption and
verdict agree with Python's; nothing is answered before a guess, Redis least of
all; a value from the page is checked against the kernel's bounds before
anything is written; and a run on Redis agrees with the scores."""

from __future__ import annotations

import re

import pytest

from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, priority_score
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import ComparisonView, compare_on_redis, comparison_answer
from echomq_viz.widgets.comparison import verdict_text
from page_runner import page_calls

PAIRS = [((1, 4_000_000_000), (2, 1)), ((2, 4_000_000_000), (2, 1)), ((1, COUNTER_MASK), (2, 0)),
         ((3, 10), (3, 9)), ((5, 0), (1, COUNTER_MASK)), ((4, 7), (4, 7))]


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


def _state(view: ComparisonView) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


def _press_run(view: ComparisonView, **message) -> list:
    """What the page's "Run it on Redis" sends (the jobs and guess it shows, or
    ``message``'s), through the widget's message path; what the kernel sent back."""
    sent = []
    view.figure.send = sent.append
    content = {"kind": "run", "a": list(view.job_a), "b": list(view.job_b), "guess": view.figure.guess, **message}
    view.figure._handle_custom_msg(content, [])
    return sent


def test_the_page_says_what_python_says_before_and_after_a_guess(tmp_path):
    views = []
    for a, b in PAIRS:
        for guess in ("", "A", "B", "skip"):
            view = ComparisonView(None, a=a, b=b)
            view.figure.guess = guess
            views.append(view)
    calls = [(name, _state(view)) for view in views for name in ("describe", "verdict", "still")]
    results = page_calls("comparison", calls, tmp_path)
    for view, (described, verdict, svg) in zip(views, zip(*[iter(results)] * 3)):
        assert described == view.describe()
        assert verdict == view.verdict_text()
        assert svg.startswith("<svg") and f"<title>{view.describe()}</title>" in svg
        scores = [f"{priority_score(*job):,}" for job in (view.job_a, view.job_b)]
        if view.prediction is None:  # nothing to read the answer from before a guess
            assert not any(score in svg for score in scores) and ">pops first<" not in svg
            assert not view.verdict_text().startswith("You")
        else:
            assert all(score in svg for score in scores)
            assert verdict.startswith("You chose to see it without guessing" if view.prediction == "skip"
                                      else f"You guessed {view.prediction}: ")


def test_the_drawn_bars_are_the_two_scores(tmp_path):
    """Each bar's tier part is its priority, its counter part the counter's share of 2³², on the page's axis."""
    views = [ComparisonView(None, a=a, b=b).predict("A") for a, b in PAIRS]
    svgs = page_calls("comparison", [("still", _state(view)) for view in views], tmp_path)
    for view, svg in zip(views, svgs):
        ticks = {int(label): float(y) for y, label in re.findall(
            r'<text x="[\d.]+" y="([\d.]+)"[^>]*text-anchor="end"[^>]*>(\d+)</text>', svg)}
        low, high = min(ticks), max(ticks)
        per_unit = (ticks[low] - ticks[high]) / (high - low)
        for name, (priority, counter) in (("A", view.job_a), ("B", view.job_b)):
            tier, part = (float(re.search(rf'<rect[^>]* height="([\d.]+)"[^>]*data-part="{kind} {name}"', svg).group(1))
                          for kind in ("tier", "counter"))
            assert tier / per_unit == pytest.approx(priority, abs=0.02)
            assert part / per_unit == pytest.approx(counter / TIER_SPAN, abs=0.02)
        first = "A" if priority_score(*view.job_a) < priority_score(*view.job_b) else "B"
        assert svg.count(">pops first<") == (0 if view.job_a == view.job_b else 1)
        assert f"job {first} has the smaller score" in svg or view.job_a == view.job_b


def test_nothing_is_answered_before_a_guess_not_even_by_redis(demo, keyspace):
    view = ComparisonView(demo)
    assert view.guess_first and not view.answered() and view.prediction is None
    assert view.describe() == ("Two score bars, hidden until you guess which job pops first: "
                               "job A priority 1, counter 4,000,000,000; job B priority 2, counter 1.")
    bundle, metadata = view._repr_mimebundle_()
    assert bundle["text/plain"] == "ComparisonView(a=(1, 4000000000), b=(2, 1), prediction=None)"
    assert metadata["echomq_viz"]["answered"] is False and metadata["echomq_viz"]["values"]
    before = keyspace()
    with pytest.raises(RuntimeError, match="guess first"):
        view.run_on_redis()
    assert _press_run(view) == [{"kind": "ran"}]  # a crafted click: refused in one line, the page freed
    assert view.status.text.startswith("error: RuntimeError: guess first") and "\n" not in view.figure.status
    assert keyspace() == before and view.result is None and view.figure.redis_answer == {}
    assert not view.answered()


def test_a_guess_is_named_in_the_verdict_and_in_what_redis_did(demo):
    view = ComparisonView(demo).predict("B")
    assert view.answered() and view.prediction == "B"
    assert view.verdict_text().splitlines()[0] == "You guessed B: wrong — job A pops first."
    _press_run(view)
    assert view.redis_text.startswith("You guessed B: wrong — Redis popped job A first (stored scores A ")
    assert "no guess" not in view.redis_text and view.status.text == ""
    looked = ComparisonView(demo).reveal()
    assert looked.answered() and looked.verdict_text().startswith("You chose to see it without guessing: job A")
    looked.run_on_redis()
    assert looked.redis_text.startswith("You chose to see it without guessing — Redis popped job A first")


def test_a_guess_belongs_to_its_pair_and_a_move_asks_anew():
    view = ComparisonView(None).predict("A")
    view.set(a=(1, 4_000_000_000))  # where it was: the guess stands
    assert view.prediction == "A"
    view.set(a=(2, 7), b=(2, 5))  # a new pair: the verdict hides until a new guess (page/comparison.js does the same)
    assert view.prediction is None and not view.answered()
    # the text alternative follows the jobs the bars stand for, not yet their scores
    assert view.describe() == ("Two score bars, hidden until you guess which job pops first: "
                               "job A priority 2, counter 7; job B priority 2, counter 5.")


@pytest.mark.parametrize("choice, error", [("C", ValueError), ("skip", ValueError), (1, TypeError), (None, TypeError)])
def test_predict_takes_only_a_or_b(choice, error):
    view = ComparisonView(None)
    with pytest.raises(error, match="choice must be 'A' or 'B'"):
        view.predict(choice)
    assert view.prediction is None


@pytest.mark.parametrize("sent, line", [
    ({"a_priority": 6}, "refused a_priority 6: it must be a whole number in 1..5"),
    ({"b_priority": 0}, "refused b_priority 0: it must be a whole number in 1..5"),
    ({"a_counter": 2**32}, "refused a_counter 4294967296: it must be a whole number in 0..4,294,967,295"),
    ({"b_counter": -1}, "refused b_counter -1"),
    ({"b_counter": 10**30}, "refused b_counter"),
    ({"guess": "C"}, "refused guess 'C': it must be A, B or skip"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_in_one_line(demo, keyspace, sent, line):
    view = ComparisonView(demo).predict("A")
    before = keyspace()
    view.figure.set_state(sent)  # the page's sync, whatever the page's own bounds
    assert (view.job_a, view.job_b, view.prediction) == ((1, 4_000_000_000), (2, 1), "A")
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    view.figure.status = ""
    [(name, value)] = sent.items()
    shown = {"a": list(view.job_a), "b": list(view.job_b), "guess": "A"}
    if name == "guess":
        shown["guess"] = value
    else:  # a_priority -> a[0], b_counter -> b[1]
        shown[name[0]][name.endswith("counter")] = value
    assert _press_run(view, **shown) == [{"kind": "ran"}]  # a run of what the page shows: refused whole
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert keyspace() == before and view.result is None  # nothing written for a refused value
    view.figure.set_state({"a_priority": 2})  # the next good value ends the refusal
    assert view.figure.status == "" and view.job_a == (2, 4_000_000_000)


@pytest.mark.parametrize("message", [{"a": [1]}, {"b": "2, 1"}, {"a": [1.0, 5]}, {"b": [True, 1]},
                                     {"a": "x" * 1_000_000}, {"b": [1, 2, list(range(200_000))]}])
def test_a_malformed_run_from_the_page_is_refused_and_writes_nothing(demo, keyspace, message):
    """A crafted run may send megabytes: the line quotes at most 40 characters of each job."""
    view = ComparisonView(demo).predict("A")
    before = keyspace()
    assert _press_run(view, **message) == [{"kind": "ran"}]
    assert view.figure.status.startswith("refused ") and "\n" not in view.figure.status
    assert len(view.figure.status) < 200, len(view.figure.status)
    assert keyspace() == before and view.result is None


def test_set_moves_the_jobs_as_the_sliders_and_refuses_what_they_cannot_show():
    view = ComparisonView(None, max_priority=3).set(a=(3, 5), b=(1, COUNTER_MASK))
    assert (view.job_a, view.job_b) == ((3, 5), (1, COUNTER_MASK))
    with pytest.raises(ValueError, match="job B priority must be in 1..3, got 4"):
        view.set(a=(2, 2), b=(4, 1))
    assert (view.job_a, view.job_b) == ((3, 5), (1, COUNTER_MASK))  # neither moved


@pytest.mark.parametrize("a, b", PAIRS)
def test_a_run_on_redis_pops_what_the_scores_say(demo, tmp_path, a, b):
    view = ComparisonView(demo, a=(1, 1), b=(1, 2)).predict("A")
    assert _press_run(view, a=list(a), b=list(b)) == [{"kind": "ran"}]  # the jobs the page shows
    assert (view.job_a, view.job_b) == (a, b) and view.status.text == ""
    result = view.result
    assert (result.score_a, result.score_b) == (priority_score(*a), priority_score(*b))
    if a != b:
        expected = "A" if priority_score(*a) < priority_score(*b) else "B"
        assert result.popped == expected and f"{expected} has the smaller score" in view.verdict_text()
        assert view.redis_text.startswith(f"You guessed A: {'right' if expected == 'A' else 'wrong'} — "
                                          f"Redis popped job {expected} first")
    answer = view.figure.redis_answer
    assert (answer["score_a"], answer["score_b"]) == (str(priority_score(*a)), str(priority_score(*b)))
    view.set(a=(5, 5), b=(5, 6))  # the reader moves on after the run
    state = _state(view)
    ran = {**state, "a_priority": a[0], "a_counter": a[1], "b_priority": b[0], "b_counter": b[1]}
    then, now = page_calls("comparison", [("redisLine", ran), ("redisLine", state)], tmp_path)
    assert then == view.redis_text  # the page says what the kernel says
    assert now.startswith(view.redis_text) and now.endswith("the jobs have moved since")


def test_compare_on_redis_is_what_the_view_shows_once_guessed_and_run(demo):
    view = ComparisonView(demo, a=(1, 4_000_000_000), b=(2, 1))
    text = compare_on_redis(demo, (1, 4_000_000_000), (2, 1))
    assert view.prediction is None and view.result is None  # the view was not touched
    view.predict("A")
    result = view.run_on_redis()
    assert view.verdict_text() == "You guessed A: right — job A pops first.\n" + verdict_text(view.job_a, view.job_b)
    assert text == verdict_text(view.job_a, view.job_b) + (
        f"\nRedis popped job A first (stored scores A {int(result.score_a):,}, B {int(result.score_b):,})")
    assert text.splitlines()[-1] in view.redis_text
    assert "ZPOPMIN pops A first" in comparison_answer(demo, (1, 4_000_000_000), (2, 1))._repr_html_()


def test_without_a_demo_redis_is_unavailable_and_says_so_in_one_line():
    view = ComparisonView(None).predict("A")
    assert view.figure.run_enabled is False
    with pytest.raises(RuntimeError, match="made without a Demo"):
        view.run_on_redis()
    _press_run(view)
    assert view.status.text.startswith("error: RuntimeError: this view was made without a Demo")


@pytest.mark.slow
def test_unreachable_redis_is_one_line_and_the_view_recovers(r):
    server = RedisServer().start()
    dead = Demo("viz-test", client=server.client(socket_timeout=1, socket_connect_timeout=1))
    server.stop()
    view = ComparisonView(dead).predict("A")
    assert _press_run(view) == [{"kind": "ran"}]
    text = view.figure.status
    assert text.startswith("error: ") and len(text.splitlines()) == 1 and len(text) < 260 and "Traceback" not in text
    view.demo = Demo("viz-test", client=r)  # Redis is back: the same click works and the line goes
    _press_run(view)
    assert view.figure.status == "" and view.result.popped == "A"
