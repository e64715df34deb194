"""The notebook views: in-place updates, live agreement with Redis, one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from echomq_viz.figures import plots
from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo, seeded_priorities
from echomq_viz.core.score import COUNTER_MASK, TIER_SPAN, is_exact, priority_score, tier_bounds
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import (
    Answer, BandsView, ComparisonView, ConsumeView, FrontierView, HeroView, InspectorView, WrapView,
    one_line, show_lua,
)


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test", client=r)


def artist_count(fig) -> int:
    return sum(len(ax.get_children()) for ax in fig.axes)


@pytest.fixture
def dead_demo():
    """A Demo whose Redis has gone away."""
    server = RedisServer().start()
    stale = Demo("viz-test", client=server.client(socket_timeout=1, socket_connect_timeout=1))
    server.stop()
    return stale


# -- consume ---------------------------------------------------------------------------


def test_consume_view_pops_in_priority_then_arrival_order(demo, r):
    priorities = seeded_priorities(11, 15, (1, 2, 3, 4))
    view = ConsumeView(demo, priorities=priorities, waiting=2)
    first = view.step()
    assert first.source == "wait" and first.id == "16"  # a job without priority beats every tier
    view.drain()
    assert [job.id for job in view.popped] == view.expected_order()
    expected = ["16", "17"] + [str(i + 1) for i in sorted(range(15), key=lambda i: (priorities[i], i))]
    assert view.expected_order() == expected
    assert not r.exists(Keys.pc(demo.ctx))
    assert "pc: deleted" in view.table_text()
    view.figure._handle_custom_msg({"kind": "pop"}, [])  # the page's Pop one
    assert "found no job" in view.status.text


def test_consume_table_is_what_redis_holds(demo):
    view = ConsumeView(demo, priorities=[2, 1, 2], waiting=0)
    lines = view.table_text().splitlines()  # in arrival order (by job id), not pop order
    assert lines[2].split()[:4] == ["2", f"{priority_score(1, 2):,}", "1", "2"]
    assert lines[-1] == "pc = 3"
    view.refill()  # a fresh batch starts from an empty queue again
    assert len(demo.entries()) == 3 and view.popped == []


def test_views_take_numpy_integers(demo):
    view = ComparisonView(demo, a=(np.int64(1), np.uint32(5)), b=(np.int8(2), np.uint64(1)))
    assert view.predict("A").run_on_redis().popped == "A"
    frontier = FrontierView(demo, priority=np.int64(2**21), first_counter=np.int64(4), width=np.int64(16))
    assert len(frontier.run_on_redis()) == 16
    wrap = WrapView(demo, start=np.int64(2**32 - 3), jobs=np.int64(4), priority=np.int64(3))
    assert wrap.run() == ["3", "4", "1", "2"]
    consume = ConsumeView(demo, priorities=np.array([2, 1, 3]), waiting=np.int64(1))
    assert [job.id for job in consume.drain()] == consume.expected_order()


# -- plots alone ----------------------------------------------------------------------------


def test_plot_updates_never_add_artists():
    from matplotlib.figure import Figure

    fig = Figure()
    axes = fig.subplots(2, 2)
    pair = plots.draw_score_pair(axes[0, 0], (1, 5), (2, 1))
    bands = plots.draw_bands(axes[1, 0], 4, zoomed=True)
    counts = [len(ax.get_children()) for ax in axes.flat]
    for k in range(5):
        plots.update_score_pair(pair, (k + 1, k), (2, 3))
        plots.update_bands(bands, [float(priority_score(1 + i % 4, i)) for i in range(k * 10)], 4)
    assert [len(ax.get_children()) for ax in axes.flat] == counts


def test_tier_colours_are_shared_and_vectorised():
    import numpy as np

    assert plots.tier_color(3) == plots.tier_color(13)
    rgba = plots.tier_colors(np.array([1, 2, 11]))
    assert (rgba[0] == rgba[2]).all() and (rgba[0] != rgba[1]).any()


# -- small pieces ------------------------------------------------------------------------------


def test_show_lua_reads_the_real_files():
    plain = show_lua("moveToActive")
    assert plain.title == "lua/moveToActive-11.lua" and "ZPOPMIN" in plain.source
    assert '--- @include "includes/isQueuePaused"' in plain.source
    assembled = show_lua("addPrioritizedJob", assembled=True)
    assert "local function getPriorityScore" in assembled.source and "@include" not in assembled.source
    assert "0x100000000" in show_lua("includes/getPriorityScore")._repr_html_()
    with pytest.raises(LookupError, match="no Lua file"):
        show_lua("dropEverything")


@pytest.mark.parametrize("name, error, fragment", [
    (5, TypeError, "name must be a str"), (None, TypeError, "NoneType"),
    ("includes/../../README", ValueError, "e.g. 'moveToActive'"), ("*", ValueError, "e.g."),
    ("moveToActive-11", ValueError, "without"), ("", ValueError, "e.g."),
])
def test_show_lua_refuses_what_is_not_a_script_name(name, error, fragment):
    with pytest.raises(error, match=fragment) as info:
        show_lua(name)
    assert len(str(info.value).splitlines()) == 1


def test_show_lua_assembled_must_be_a_bool():
    with pytest.raises(TypeError, match="assembled must be True or False, got str 'yes'"):
        show_lua("moveToActive", assembled="yes")


def test_one_line_keeps_errors_short():
    assert one_line(ValueError("first\nsecond")) == "ValueError: first"
    assert len(one_line(RuntimeError("x" * 1000))) < 230
    assert one_line(KeyError()) == "KeyError"


# -- inspector ------------------------------------------------------------------------------


def test_inspector_view_reads_and_draws_a_queue(demo, redis_server):
    demo.add_batch([1, 3, 2, 1])
    demo.add_past_the_limit_for_teaching("far", 2**21)
    view = InspectorView(redis_server.url, queue=f"{{{demo.queue}}}", tiers=4)
    report = view.inspect()
    assert report.total == 5 and list(report.tier_counts) == [1, 2, 3, 2**21]
    points = view.figure.queue_map["points"]
    assert len(points) == 5  # every job, the one past the limit too (a square: its score is rounded)
    assert [kind for *_, kind in points].count(1) == 1 and view.figure.queue_map["rows"][-1] == str(2**21)
    assert view.figure.progress == [5, 5]
    # a read refused next: the last one's map and report go, where they stood under the refusal
    # as if they were the queue now typed
    view.figure.url = "redis://127.0.0.1:1/0"
    view._on_run()
    assert view.status.text.startswith("error: RedisUnavailable")
    assert view.figure.queue_map == {} and view.figure.summary == "" and view.report is None


def test_inspector_view_unreachable_is_one_line():
    view = InspectorView("redis://127.0.0.1:1/0", queue="{q}")
    view._on_run()
    assert view.status.text.startswith("error: RedisUnavailable: cannot reach Redis at redis://127.0.0.1:1")
    assert len(view.status.text.splitlines()) == 1


def test_bands_switch_to_pixels_for_many_jobs():
    import numpy as np
    from matplotlib.figure import Figure

    from echomq_viz.core.score import priority_scores_array

    fig = Figure(figsize=(4, 3), dpi=100)
    bands = plots.draw_bands(fig.add_axes((0.1, 0.1, 0.8, 0.8)), 3, zoomed=True)
    n = plots.SCATTER_LIMIT + 1
    tiers = np.arange(n) % 3 + 1
    plots.update_bands(bands, priority_scores_array(tiers, np.arange(1, n + 1)).astype(float), 3)
    assert bands.density.get_visible() and not bands.points.get_visible()
    pixels = bands.density.get_array()
    assert pixels.shape[:2] == (int(bands.density.axes.bbox.height), int(bands.density.axes.bbox.width))
    painted = pixels[..., 3] > 0
    assert painted.sum() > 300  # the three diagonals, one pixel per column at least
    rows = np.nonzero(painted.any(axis=1))[0]
    lowest = pixels[rows[0]][painted[rows[0]]][0]
    highest = pixels[rows[-1]][painted[rows[-1]]][0]
    assert tuple(lowest) == tuple(plots.tier_colors(np.array([1]))[0])  # tier 1 at the bottom
    assert tuple(highest) == tuple(plots.tier_colors(np.array([3]))[0])  # tier 3 at the top
    plots.update_bands(bands, [float(priority_scores_array(2, 5))], 3)
    assert bands.points.get_visible() and not bands.density.get_visible()


# -- figure text alternatives -----------------------------------------------------------------


def caption_of(view) -> str:
    """The caption's text as a reader sees it, checked to sit right under the figure: a static
    image, which the app and the offline pages name after the caption that follows it
    (label-figures.js)."""
    import html
    import re

    import ipywidgets

    def containers(widget):
        if isinstance(widget, ipywidgets.Box):
            yield widget
            for child in widget.children:
                yield from containers(child)

    (holder,) = [box for box in containers(view.widget)
                 if any(isinstance(child, ipywidgets.Image) for child in box.children)]
    children = list(holder.children)
    (image,) = [child for child in children if isinstance(child, ipywidgets.Image)]
    assert children[children.index(image) + 1] is view.caption
    text = html.unescape(re.sub(r"<[^>]+>", "", view.caption.value))
    assert text == f"Figure: {view.describe()}"
    return view.describe()


def test_consume_caption_names_the_last_pop_and_what_is_left(demo):
    view = ConsumeView(demo, priorities=[2, 1, 2], waiting=1)
    assert view.describe().startswith("Queue strip: 4 jobs in arrival order (by job id), not the order")
    assert "nothing popped yet" in view.describe() and "next" not in view.describe()  # the question stays open
    view.step()
    view.step()
    text = view.describe()
    assert "3 jobs left" not in text and "2 jobs left, in arrival order" in text
    assert "2 popped, the last job 2 (priority 1)" in text
    view.drain()
    assert view.describe().startswith("Queue strip: empty")


def test_frontier_and_wrap_captions_follow_their_state(demo):
    frontier = FrontierView(None, priority=2**21, first_counter=4)
    rounded = sum(not is_exact(2**21, c) for c in range(4, 20))
    assert f"2 apart: {rounded} of 16 rounded" in frontier.describe()
    frontier.set(priority=2**21 - 1)
    assert "1 apart: 0 of 16 rounded" in frontier.describe()
    wrap = WrapView(demo, start=TIER_SPAN - 3, jobs=4, priority=3)
    assert "not filed yet" in wrap.describe()
    wrap.figure._handle_custom_msg({"kind": "run", "start": TIER_SPAN - 3}, [])  # the page's button
    assert "arrival order 1 2 3 4 with counter parts 4,294,967,294 4,294,967,295 0 1; pop order 3 4 1 2" in wrap.describe()


def test_inspector_caption_counts_what_it_drew(demo, redis_server):
    demo.add_batch([1, 3, 2, 1])
    view = InspectorView(redis_server.url, queue=f"{{{demo.queue}}}", tiers=4)
    assert view.describe() == ("The queue's jobs, one row per tier present, the arrival counter across, "
                               "empty: nothing read yet.")
    view._on_run()  # the page's Inspect button; the page draws its caption from describe (test_inspector_view)
    assert view.status.text == ""
    assert "4 jobs drawn: tier 1: 2, tier 2: 1, tier 3: 1." in view.describe()


# -- one guarded callback for every control ------------------------------------------------------


def test_a_failing_action_is_one_line_and_frees_its_controls(demo):
    def boom(*args, **kwargs):
        raise RuntimeError("Redis went away\nsecond line")

    consume = ConsumeView(demo, priorities=[1, 2], waiting=0)
    frontier = FrontierView(demo)
    wrap = WrapView(demo)
    demo.pop = demo.drain = demo.reset = boom
    press = lambda kind: lambda: consume.figure._handle_custom_msg({"kind": kind}, [])  # noqa: E731 (its buttons)
    cases = [(consume, press("pop"), []), (consume, press("drain"), []), (consume, press("refill"), []),
             (frontier, lambda: frontier.figure._handle_custom_msg({"kind": "run", "priority": 2**21,
                                                                     "first_counter": 4}, []), []),
             (wrap, lambda: wrap.figure._handle_custom_msg({"kind": "run", "start": TIER_SPAN - 3}, []), [])]
    for view, act, controls in cases:
        view.status.note("a stale note")
        act()
        assert view.status.text == "error: RuntimeError: Redis went away"  # cleared first, then one line
        assert not any(control.disabled for control in controls)


# -- bad input, values given in code: refused, never clamped ----------------------------------------
# (imports of the tests below sit here so this section merges apart from edits above)

import re  # noqa: E402

from conftest import assert_refused, not_redis_server, one_clear_line  # noqa: E402
from echomq_viz.redis_side.server import connect, free_tcp_port  # noqa: E402

CONSTRUCTOR_REFUSALS = {
    "HeroView priority 0": (lambda: HeroView(None, priority=0), ValueError, "priority"),
    "HeroView priority 99 beyond its 6 tiers": (lambda: HeroView(None, priority=99, tiers=6), ValueError, "priority"),
    "HeroView tiers 0": (lambda: HeroView(None, tiers=0), ValueError, "tiers"),
    "HeroView counter -1": (lambda: HeroView(None, counter=-1), ValueError, "counter"),
    "HeroView counter 2**32 (no slider position)": (lambda: HeroView(None, counter=2**32), ValueError, "counter"),
    "HeroView priority 1.5": (lambda: HeroView(None, priority=1.5), TypeError, "priority"),
    "HeroView priority numpy float64": (lambda: HeroView(None, priority=np.float64(2.0)), TypeError, "float64"),
    "ComparisonView a=(0, 1)": (lambda: ComparisonView(None, a=(0, 1)), ValueError, "priority"),
    "ComparisonView a=(1,)": (lambda: ComparisonView(None, a=(1,)), TypeError, "(priority, counter)"),
    "ComparisonView b counter -5": (lambda: ComparisonView(None, b=(1, -5)), ValueError, "counter"),
    "FrontierView priority 5 (not a frontier choice)": (lambda: FrontierView(None, priority=5), ValueError, "priority"),
    "BandsView without a Demo": (lambda: BandsView(None), TypeError, "Demo"),
    "ConsumeView without a Demo": (lambda: ConsumeView(None, priorities=[1]), TypeError, "Demo"),
}


@pytest.mark.parametrize("case", CONSTRUCTOR_REFUSALS, ids=list(CONSTRUCTOR_REFUSALS))
def test_widget_constructors_refuse_bad_values_with_a_clear_message(case):
    make, error, fragment = CONSTRUCTOR_REFUSALS[case]
    with assert_refused(error, re.escape(fragment)):
        make()


@pytest.fixture
def filled_demo(r) -> Demo:
    """A demo queue holding three jobs, next to someone else's key."""
    queue = Demo("viz-filled", client=r)
    queue.add_batch([2, 1, 3])
    r.set("someone-else", "data")
    return queue


VIEW_ON_A_DEMO_REFUSALS = {
    "BandsView tiers 0": (lambda d: BandsView(d, tiers=0, jobs=20), ValueError, "tiers"),
    "ConsumeView batch with priority 0": (lambda d: ConsumeView(d, priorities=[1, 0]), ValueError, "1..2,097,151"),
}


@pytest.mark.parametrize("case", VIEW_ON_A_DEMO_REFUSALS, ids=list(VIEW_ON_A_DEMO_REFUSALS))
def test_views_on_a_demo_refuse_bad_values_and_write_nothing(filled_demo, keyspace, case):
    make, error, fragment = VIEW_ON_A_DEMO_REFUSALS[case]
    with assert_refused(error, re.escape(fragment), keyspace):  # the demo queue included: refused before reset
        make(filled_demo)


def test_inspector_view_bad_input_is_one_status_line_and_writes_nothing(redis_server, r, keyspace, caplog):
    r.hset("emq:{odd}:prioritized", "not", "a zset")
    r.set("someone-else", "data")
    before = keyspace()
    url = redis_server.url
    with not_redis_server() as http_port:
        cases = [
            (InspectorView(url, queue=""), "error: ValueError: queue name must not be empty"),
            (InspectorView(url, queue="   "), "error: ValueError: queue name must not be empty"),
            (InspectorView(url, prefix="em q", queue="{q}"),
             "error: ValueError: key prefix must not contain whitespace or control characters, got ' ' in 'em q'"),
            (InspectorView(url, queue="{odd}"), "error: ValueError: emq:{odd}:prioritized is a hash, not a zset"),
            (InspectorView("htp://x", queue="{q}"), "error: RedisUnavailable: bad Redis URL 'htp://x'"),
            (InspectorView(f"redis://127.0.0.1:{http_port}/0", queue="{q}"),
             f"error: RedisUnavailable: cannot reach Redis at redis://127.0.0.1:{http_port}/0"),
        ]
        for view, expected in cases:
            view._on_run()  # the page's Inspect button
            text = view.status.text
            assert text.startswith(expected), text
            assert one_clear_line(text) and len(text) < 260
            assert view.report is None
    assert "Exception in callback" not in caplog.text  # the guard caught it, not ipywidgets
    assert keyspace() == before


# -- faults: Redis stops in the middle of an action -------------------------------------------------


def test_view_whose_redis_stops_mid_action_shows_one_line_and_recovers(caplog):
    port = free_tcp_port()
    server = RedisServer(port=port).start()
    restarted = None
    try:
        demo = Demo("viz-fault", client=connect(server.url, timeout=2))
        comparison = ComparisonView(demo, a=(1, 4_000_000_000), b=(2, 1)).predict("A")
        consume = ConsumeView(demo, priorities=[2, 1, 3], waiting=1)
        hero = HeroView(demo)
        comparison._run()  # its page's "Run it on Redis"
        assert "Redis popped job A first" in comparison.redis_text and comparison.status.text == ""

        # Redis goes away in the middle of "Pop one": after the pop, before the table is read.
        real_pop = demo.pop

        def pop_then_stop(*args, **kwargs):
            job = real_pop(*args, **kwargs)
            server.stop()
            return job

        demo.pop = pop_then_stop
        consume.figure._handle_custom_msg({"kind": "pop"}, [])  # its page's "Pop one"
        demo.pop = real_pop
        assert not server.running
        hero.switch_live(True)  # adds on Redis at once: fails, shown in the view
        hero.set(counter=12)
        comparison._run()
        for view in (consume, hero, comparison):
            text = view.status.text
            assert text.startswith("error: ConnectionError") and one_clear_line(text) and len(text) < 260, text
            assert "Traceback" not in view.figure.status  # drawn in the page
        assert "Exception in callback" not in caplog.text

        # A new server on the same address: the same views work again, the error line goes.
        restarted = RedisServer(port=port, password=server.password).start()
        consume.figure._handle_custom_msg({"kind": "refill"}, [])  # its page's "Fresh batch"
        assert consume.status.text == "" and len(demo.entries()) == 3 and demo.waiting()
        assert [job.id for job in consume.drain()] == consume.expected_order()
        hero.set(counter=99)
        assert hero.status.text == "" and hero.live_text.endswith("equal")
        comparison.redis_text = ""
        comparison._run()  # the very same click that failed before
        assert "Redis popped job A first" in comparison.redis_text
        assert comparison.status.text == "", "a stale error stays under a view that works again"
        comparison.set(a=(3, 4_000_000_000)).predict("B")  # a new pair asks for a new guess
        comparison._run()
        assert "Redis popped job B first" in comparison.redis_text
    finally:
        server.stop()
        if restarted is not None:
            restarted.stop()


# -- the package: each notebook loads only its own view --------------------------------------


def test_a_view_imports_only_its_own_module_and_what_it_needs():
    import ast
    import subprocess
    import sys

    # matplotlib and numpy among them: notebook 01's kernel (a Demo, the hero drawn in the page)
    # needs neither, and a kernel that never loads them is some 30 MB lighter (a class is counted
    # in kernels)
    code = ("import sys; from echomq_viz.experiments.live import Demo; from echomq_viz.widgets import HeroView, show_lua; "
            "HeroView(None); print(sorted(m for m in sys.modules if m.startswith(('echomq_viz.', 'matplotlib', 'numpy'))))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = ast.literal_eval(run.stdout.strip())
    assert "echomq_viz.widgets.hero" in loaded and "echomq_viz.widgets.lua_source" in loaded
    others = ("bands", "comparison", "consume", "designs", "double", "frontier", "inspector", "paths")
    assert not [m for m in loaded if m.rsplit(".", 1)[-1] in others or m.endswith((".inspection", ".interop"))], loaded
    assert not [m for m in loaded if m.startswith(("matplotlib", "numpy"))], loaded


def test_every_view_name_resolves_lazily():
    import echomq_viz.widgets as widgets

    assert sorted(widgets.__all__) == sorted(widgets._WHERE)
    for name in widgets.__all__:
        assert getattr(widgets, name).__name__ == name
    assert set(widgets.__all__) <= set(dir(widgets))
    with pytest.raises(AttributeError, match="no attribute 'NoSuchView'"):
        widgets.NoSuchView


# -- the reader's turn: guess-first views, answers beside a view, steps without one -------------------


def test_guess_first_views_start_unanswered_and_only_an_act_answers_them(demo):
    race = ComparisonView(demo)
    assert race.guess_first and not race.answered()
    race.predict("A")
    assert race.answered()
    consume = ConsumeView(demo, priorities=[2, 1], waiting=0)
    assert consume.guess_first and not consume.answered()
    consume.step()
    assert consume.answered()
    hero = HeroView(None)
    assert not hero.guess_first and hero._repr_mimebundle_()[1]["echomq_viz"]["guess_first"] is False


def test_an_answer_is_folded_and_its_text_plain_holds_no_answer():
    answer = Answer("Guessed? Open to see", "A pops first <b>")
    page = answer._repr_html_()
    assert page.startswith("<details class='echomq-viz-answer'>") and " open" not in page.split(">", 1)[0]
    assert "A pops first &lt;b&gt;" in page and "A pops first" not in repr(answer)
    with pytest.raises(ValueError, match="text must not be empty"):
        Answer("summary", "")


def test_a_static_image_is_no_shown_value():
    """What a view records of its controls and texts leaves out a static image's pixels: the widget
    state keeps them as a buffer, and the still is their record."""
    import ipywidgets
    from matplotlib.figure import Figure

    from echomq_viz.widgets.view import shown_values, static_image

    image = static_image(Figure(figsize=(1, 1), dpi=96))
    text = ipywidgets.HTML("Figure: a square")
    assert shown_values(ipywidgets.VBox([image, text])) == {text.model_id: {"value": "Figure: a square"}}


@pytest.mark.parametrize("name, shown", [("y" * 1_000_000, "'" + "y" * 38 + "…"), ("a\nb", "'a\\nb'"),
                                         ("points", "points")])
def test_a_name_the_page_may_not_write_is_refused_in_one_short_line(name, shown):
    """A crafted message may name anything, megabytes long or with a line break: the refusal
    quotes at most 40 characters of it, on one line, and the kernel's value stays."""
    from echomq_viz.widgets.hero import HeroFigure

    figure = HeroFigure()
    figure.set_state({name: 1})
    assert figure.status == f"refused {shown}: only the kernel writes it", figure.status[:200]
