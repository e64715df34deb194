"""Notebook 10's pop orders, drawn in the page: the page's drawing, caption and
details agree with Python's for every library chosen, the strips are the
orders the libraries handed out on Redis, and a value from the page outside
the kernel's bounds (or one only the kernel writes) is refused in one line,
nothing written."""

from __future__ import annotations

import dataclasses
import re

import pytest

from conftest import assert_refused
from echomq_viz.peers import details, observe_all, order_verdict, peer_makers, workload
from echomq_viz.peers.view import MAX_JOBS, OrdersView
from page_runner import page_calls, svg_problems

KEYS = ("packed", "kombu", "kombu10", "rq", "huey")  # the quick ones: no Node.js, no event loop


@pytest.fixture(scope="module")
def runs(redis_server):
    """Five libraries through the notebook's workload on the test server (kombu's
    default steps hand tier 2 out before tier 1)."""
    client = redis_server.client()
    client.flushall()
    try:
        yield observe_all(peer_makers(client, KEYS), workload())
    finally:
        client.flushall()
        client.close()


def _state(view: OrdersView) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


def _strips(svg: str) -> list[tuple[str, list[str], list[str], int]]:
    """Each strip as drawn: (its title, the job names and tiers of its boxes, how many are dashed)."""
    found = []
    for group in re.findall(r"<g[^>]*>(.*?)</g>", svg):
        title = re.search(r'font-size="13"[^>]*>([^<]+)</text>', group).group(1)
        labels = re.findall(r'<text data-on="[^"]+"[^>]*>([^<]+)</text>', group)
        found.append((title, labels[0::2], labels[1::2], group.count('data-wrong="true"')))
    return found


def test_the_page_says_and_draws_what_python_says_of_every_choice(runs, tmp_path):
    # and two runs no real library made here: one that lost a job, and every library right
    lost = dataclasses.replace(runs[1], key="lossy", label="lost one", order=runs[1].order[:-1])
    sets = [runs, [*runs, lost], [runs[0], runs[2]]]
    views = [OrdersView(chosen).select(run.key) for chosen in sets for run in chosen]
    calls = [(name, _state(view)) for view in views for name in ("describe", "detailsText", "still")]
    results = page_calls("orders", calls, tmp_path)
    for view, (described, text, svg) in zip(views, zip(*[iter(results)] * 3)):
        assert described == view.describe() and text == view.text() == details(view.chosen)
        assert f"<title>{view.describe()}</title>" in svg and svg_problems(svg) == []
        assert f"library: {view.chosen.label} ▾" in svg  # the still shows the menu's choice
        strips = _strips(svg)
        assert [title for title, *_ in strips] == ["a correct priority queue: tier, then arrival"] + [
            f"{'▶ ' if run is view.chosen else ''}{run.label}: {order_verdict(run)}" for run in view.runs]
        bold = re.findall(r'font-weight="700"[^>]*>([^<]+)</text>', svg)
        assert bold == [f"▶ {view.chosen.label}: {order_verdict(view.chosen)}"]
        for (_, names, tiers, dashed), run in zip(strips, [None, *view.runs]):
            order = run.order if run else view.runs[0].right
            assert names == list(order)
            assert tiers == [f"t{view.figure.tiers[name]}" for name in order]
            if run:  # a box where the order is not the right one is dashed; a job it lacks, a dashed slot
                right = run.right
                assert dashed == sum(i >= len(right) or name != right[i] for i, name in enumerate(order))
                assert svg.count('stroke="#d9d9d9" stroke-width="3"') == sum(len(r.right) - len(r.order)
                                                                           for r in view.runs)
    assert "kombu, 4 steps, lost one hand them out in another order (their differing boxes" in views[5].describe()
    assert "; every library hands them out in the right order. Selected" in views[-1].describe()


def test_the_strips_are_the_orders_the_libraries_handed_out_on_redis(runs):
    """The runs' orders are what each library popped from Redis: the packed score's is the
    right one, kombu's default steps put tier 2 among tier 1, ten steps keep them apart."""
    view = OrdersView(runs)
    libraries = {lib["key"]: lib for lib in view.figure.libraries}
    right = [job.name for job in sorted(workload(), key=lambda job: (job.tier, job.arrival))]
    assert view.figure.right == right and set(view.figure.tiers.items()) == {(j.name, j.tier) for j in workload()}
    for run in runs:
        assert libraries[run.key]["order"] == list(run.order) and sorted(run.order) == sorted(right)
        assert libraries[run.key]["verdict"] == order_verdict(run)
    assert [key for key, lib in libraries.items() if lib["order"] != right] == ["kombu"]
    kombu = libraries["kombu"]["order"]
    assert {view.figure.tiers[name] for name in kombu[:8]} == {1, 2}  # tiers 1 and 2 share one list


def test_choosing_a_library_from_code_shows_it(runs):
    view = OrdersView(runs)
    assert repr(view) == "OrdersView(5 libraries, showing 'packed score (this project)')"
    assert view.select("rq") is view and view.figure.library == 3 and view.text() == details(runs[3])
    assert view.describe().endswith("Selected: RQ, 3 queues.")
    assert repr(view).endswith("showing 'RQ, 3 queues')")
    data, metadata = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert metadata["echomq_viz"]["values"] == {view.figure.model_id: {"library": 3}}
    with assert_refused(ValueError, "key must be one of packed, kombu, kombu10, rq, huey, got 'celery'"):
        view.select("celery")
    with assert_refused(TypeError, "key must be a str"):
        view.select(3)
    assert view.figure.library == 3


@pytest.mark.parametrize("sent, line", [
    ({"library": 5}, "refused library 5: it must be a whole number in 0..4"),
    ({"library": -1}, "refused library -1: it must be a whole number in 0..4"),
    ({"library": 10**30}, "refused library"),
    ({"library": True}, "refused library True"),
    ({"library": 1.5}, "refused library 1.5: not a value it can take"),
    ({"library": "rq"}, "refused library 'rq': not a value it can take"),
    ({"libraries": []}, "refused libraries: only the kernel writes it"),
    ({"right": ["j01"]}, "refused right: only the kernel writes it"),
    ({"tiers": {"j01": 3}}, "refused tiers: only the kernel writes it"),
    ({"tiers": "x" * 100}, "refused tiers: only the kernel writes it"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_in_one_line(runs, keyspace, sent, line):
    view = OrdersView(runs).select("rq")
    before, state = keyspace(), _state(view)
    view.figure.set_state(sent)  # what a message from the page does, whatever the page's own menu
    assert _state(view) == {**state, "status": view.figure.status} and view.figure.library == 3
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert keyspace() == before  # nothing written
    view.figure.set_state({"library": 4})  # the next good choice ends the refusal
    assert view.figure.status == "" and view.chosen is runs[4]


def test_orders_view_refuses_what_is_not_one_workloads_runs(runs):
    with assert_refused(TypeError, "runs must be a non-empty list of PeerRun"):
        OrdersView([])
    with assert_refused(TypeError, "runs must be a non-empty list of PeerRun"):
        OrdersView(runs[0])
    with assert_refused(TypeError, "runs must be a non-empty list of PeerRun"):
        OrdersView([runs[0], "rq"])
    other = dataclasses.replace(runs[1], jobs=tuple(workload(seed=7)))
    with assert_refused(ValueError, "runs must all be of one workload"):
        OrdersView([runs[0], other])
    many = tuple(workload(per_tier=MAX_JOBS // 3 + 1))
    with assert_refused(ValueError, f"runs must be of at most {MAX_JOBS} jobs"):
        OrdersView([dataclasses.replace(runs[0], jobs=many)])
