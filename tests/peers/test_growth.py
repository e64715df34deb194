"""Notebook 10's cost as the queue grows (echomq_viz.peers.growth, the stored run it draws, and
its view): every library timed the same way, Redis's own time kept beside the client's, and the
notebook's sentences on Bull's insert held to the stored run."""

from __future__ import annotations

import pytest

from conftest import SERVER_KINDS, assert_refused, server_binary
from echomq_viz.peers.growth import growth_jobs, load_growth, measure_growth, series
from echomq_viz.redis_side import server as server_mod
from notebook10_text import notebook



@pytest.mark.slow
def test_growth_measures_every_size_in_batches_with_redis_own_time():
    from echomq_viz.peers.growth import SLOWLOG_ARGS, _server_seconds, slowlog_on
    from echomq_viz.peers.packed_peers import PackedPeer

    server = server_mod.RedisServer(extra_args=SLOWLOG_ARGS).start()
    try:
        with PackedPeer(server.client()) as peer:
            assert slowlog_on(peer.client)
            points = measure_growth(peer, (5, 20), per_size=3, batches=2, server=True)
            assert [point["n"] for point in points] == [5, 20]
            for point in points:
                for kind in ("add", "add_least", "pop", "server_add", "server_add_least", "server_pop"):
                    assert len(point[kind]) == 2 and all(value > 0 for value in point[kind]), kind
            # Redis's own time is a part of what the client waits: each add's SLOWLOG durations
            # fall inside the client's timer around it, so their sums compare the same way
            # (a median of one against a mean of the other need not).
            jobs = growth_jobs(3, 100)
            peer.client.slowlog_reset()
            waited = sum(peer.time_adds(jobs))
            inside = _server_seconds(peer.client, len(jobs)) * len(jobs)
            assert 0 < inside <= waited, (inside, waited)
            peer.reset()
            assert not list(server.client().scan_iter(match=f"{peer.prefix}*"))
            with assert_refused(ValueError, "sizes must increase"):
                measure_growth(peer, (20, 5))
    finally:
        server.stop()
    assert [job.name for job in growth_jobs(3, 10)] == ["g10", "g11", "g12"]
    assert {job.tier for job in growth_jobs(5, 0, tier=3)} == {3}


@pytest.mark.slow
@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_redis_own_time_counts_a_script_once_not_again_for_what_it_calls(kind):
    """Redis logs each command a script calls beside the script, whose duration already holds
    them: counted again, every add through a script (this project's, Bull's, BullMQ's) read as
    costing Redis more than it did, and under load more than the client waited for it."""
    from echomq_viz.peers.growth import SLOWLOG_ARGS, _server_seconds

    server = server_mod.RedisServer(server_binary(kind), extra_args=SLOWLOG_ARGS).start()
    try:
        client = server.client()
        client.slowlog_reset()
        client.eval(" ".join(["redis.call('INCR', 'n');"] * 50) + " return 1", 0)
        entries = client.slowlog_get(-1)
        scripts = [entry["duration"] for entry in entries if bytes(entry["command"]).startswith(b"EVAL")]
        called = [entry["duration"] for entry in entries if bytes(entry["command"]).upper().startswith(b"INCR")]
        assert len(scripts) == 1 and len(called) == 50, entries  # the log holds both
        assert _server_seconds(client, 1) == scripts[0] / 1e6
    finally:
        server.stop()


def test_the_stored_run_has_five_batches_a_size_and_redis_own_time():
    stored = load_growth()
    assert stored["batches"] >= 5 and stored["sizes"] == [100, 1_000, 10_000, 100_000]
    prose, _ = notebook()  # as the figure's paragraph says
    assert stored["batches"] == 5 and "five times over, 30 adds of the most urgent tier" in prose
    assert stored["per_size"] == 30 and "(100 to 100,000)" in prose
    assert stored["server_timing"]
    for which in ("add", "add_least", "pop", "server_add", "server_add_least", "server_pop"):
        lines = series(stored, which)
        assert set(lines) == {entry["label"] for entry in stored["libraries"].values()}, which
        assert all(len(points) == 4 and all(lo <= med <= hi for _, med, lo, hi in points)
                   for points in lines.values())
    with assert_refused(ValueError, "which must be one of add, add_least, pop"):
        series(stored, "both")


def test_bulls_add_cost_grows_with_the_less_urgent_jobs_waiting():
    """The notebook's sentence on Bull's add, checked against the stored run: at 100,000
    waiting, Redis spends far longer on a most urgent add (it walks past every less urgent
    job) than on a least urgent one, and the packed score's add stays flat."""
    stored = load_growth()
    bull = stored["libraries"].get("bull")
    if bull is None:
        pytest.fail("the stored run has no Bull (it was made without Node.js)")
    urgent, least = series(stored, "server_add")[bull["label"]], series(stored, "server_add_least")[bull["label"]]
    assert urgent[-1][1] > 5 * least[-1][1]
    assert urgent[-1][1] / urgent[0][1] > 5 * (least[-1][1] / least[0][1])
    packed = series(stored, "server_add")[stored["libraries"]["packed"]["label"]]
    assert packed[-1][1] / packed[0][1] < 3
    prose, _ = notebook()
    assert "in proportion to the waiting jobs *less urgent* than the new one" in prose


@pytest.mark.slow
def test_the_list_walk_times_each_command_on_the_list_and_leaves_no_key():
    """Each place's time is read from the SLOWLOG entries of its own command, whether the client
    decodes its replies or not; the list goes afterwards, and a server that does not log every
    command is refused."""
    from echomq_viz.peers.growth import SLOWLOG_ARGS, measure_list_walk

    server = server_mod.RedisServer(extra_args=SLOWLOG_ARGS).start()
    try:
        for client in (server.client(), server.client(decode_responses=True)):
            walk = measure_list_walk(client, size=3_000, repeats=3)
            assert (walk["size"], walk["repeats"]) == (3_000, 3)
            for command in ("lindex_us", "linsert_us"):
                assert set(walk[command]) == {"head", "middle", "tail"}
                assert all(us >= 0 for us in walk[command].values()), walk
            assert client.dbsize() == 0
        client = server.client()
        client.config_set("slowlog-log-slower-than", 10_000)
        with assert_refused(ValueError, "the server must log every command"):
            measure_list_walk(client, size=3_000)
    finally:
        server.stop()


def test_bulls_insert_walks_the_list_and_its_index_does_not():
    """'`LINDEX` costs a few µs at any index [...] `LINSERT` compares element after element from the
    head to its pivot', against the stored run's list walk (Redis's own time, 10^5 elements)."""
    walk = load_growth()["list_walk"]
    lindex, linsert = walk["lindex_us"], walk["linsert_us"]
    assert walk["size"] == 100_000 and set(lindex) == set(linsert) == {"head", "middle", "tail"}
    assert max(lindex.values()) < 50  # a few µs wherever it looks
    assert linsert["middle"] > 50 * linsert["head"] and linsert["tail"] > linsert["middle"]  # it walks
    assert linsert["middle"] > 20 * lindex["middle"]
    prose, printed = notebook()
    assert "`LINDEX` costs a few µs at any index" in prose and "`LINSERT` compares element after element" in prose
    from echomq_viz.peers.telling import walk_text
    assert walk_text(walk) in printed


@pytest.mark.slow  # matplotlib draws two log-log plots
def test_growth_view_fits_the_page_and_is_drawn_once(tmp_path, monkeypatch):
    from PIL import Image

    from echomq_viz.figures import visual
    from echomq_viz.peers import view as view_mod
    from echomq_viz.peers.view import GrowthView, growth_figure, growth_png
    from echomq_viz.widgets.view import still_png
    from test_widgets import caption_of

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    stored = load_growth()
    fig = growth_figure(stored)
    assert len(fig.axes) == 2 and all("Redis's own time" in ax.get_title(loc="left") for ax in fig.axes)
    # the project's visual system: fits every page, legible type (the pop orders: tests/peers/test_orders_view.py)
    assert fig.get_figwidth() * fig.dpi <= visual.MAX_FIGURE_PX
    assert visual.smallest_text_px(fig)[0] >= visual.MIN_TEXT_PX
    for ax in fig.axes:  # plain numbers on both axes, never "2 × 10²"
        ax.figure.canvas.draw()
        labels = [tick.get_text() for tick in ax.get_xticklabels() + ax.get_yticklabels() if tick.get_text()]
        assert labels and not any("10^" in text or "times" in text or "×" in text for text in labels), labels
    growth = GrowthView(stored)
    assert growth.fig.png == still_png(fig)  # the figure as drawn, then kept
    assert Image.open(__import__("io").BytesIO(growth.fig.png)).size[0] <= visual.MAX_FIGURE_PX
    assert growth.widget.children[0].value == growth.fig.png == still_png(growth.fig)  # the still is the image
    assert all(entry["label"] in growth.describe() for entry in stored["libraries"].values())
    bull_add = series(stored, "server_add")["Bull (Node.js)"]  # what the figure shows, said in words too
    assert f"Bull (Node.js) {bull_add[0][1] * 1e6:,.0f} to {bull_add[-1][1] * 1e6:,.0f}" in growth.describe()
    assert caption_of(growth) == growth.describe()  # right under its image, which it names
    kept = list((tmp_path / "echomq-viz" / "peers-runs").glob("growth-*.png"))
    assert len(kept) == 1 and oct(kept[0].stat().st_mode)[-3:] == "600"
    monkeypatch.setattr(view_mod, "growth_figure", lambda stored: pytest.fail("drawn again"))
    assert GrowthView(stored).fig.png == growth.fig.png  # a later kernel reads it, draws nothing
    changed = {**stored, "batches": stored["batches"] + 1}
    with pytest.raises(pytest.fail.Exception, match="drawn again"):
        growth_png(changed)  # another stored run: drawn anew
    monkeypatch.undo()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert growth_png(stored, cache_dir=blocked) == growth.fig.png  # no folder to keep it in: drawn, not kept
