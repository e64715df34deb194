"""Notebook 10 as a reader meets it: half the reading it was, each thing said once, every term
defined where it first appears, the answers folded until the reader has run the cells."""

from __future__ import annotations

from echomq_viz.peers import correct_order, workload
from echomq_viz.peers.workload import order_difference
from notebook10_text import cells, notebook, open_prose, reading


def test_an_order_is_told_as_its_difference_from_the_right_one():
    right = ["j01", "j03", "j02", "j04"]
    assert order_difference(right, right) == "·   ·   ·   ·"
    assert order_difference(["j01", "j02", "j03", "j04"], right) == "·   j02 j03 ·"
    assert order_difference(["j01", "j03"], right) == "·   ·   -   -"  # jobs it never handed out


def test_notebook_10_reads_in_half_and_says_each_thing_once():
    text = reading()
    assert len(text) <= 50_665 // 2, len(text)  # half of what it read before (prose, code and printed text)
    prose, printed = notebook()
    right = " ".join(correct_order(workload()))
    assert printed.count(right) == 1  # the reference order, once; every run a difference from it
    assert printed.count("task_default_queue") == 1 and printed.count("worker_concurrency") == 1  # settings once
    for term, definition in (("*prefork pool*", "child processes its worker forks"), ("`MONITOR`", "streams every"),
                             ("*acknowledged*", "taken charge of"), ("`x-max-priority`", "RabbitMQ's count"),
                             ("`SLOWLOG`", "log of each command's duration")):
        first = prose.index(term.strip("*`"))
        assert prose.index(definition) - first < 200, term  # defined where it first appears


def test_notebook_10_installs_nothing_in_colab_beyond_the_shared_set_up_cell():
    """Its second Colab cell ran `pip install` with the peers extra, empty now: pip exited 1."""
    code = ["".join(cell["source"]) for cell in cells() if cell["cell_type"] == "code" and cell.get("id") != "colab-setup"]
    assert not [source for source in code if "pip" in source or "google.colab" in source]


def test_the_notebook_asks_before_it_answers():
    """No text a reader meets before acting states an answer: each answer below is inside a fold."""
    answers = ["Celery's 0 is the most urgent", "so it ran 6th", "Both ran the urgent task next",
               "10, 11 and 12 before 2", "`round_robin` and `random` give up the queue order",
               "only `get_nowait()` polls", "Celery fails first at queue declaration", "takes 0 into its list",
               "BullMQ before them", "its id left the queue"]
    prose, _ = notebook()
    shown = open_prose()
    for answer in answers:
        assert answer not in shown, f"stated in the open: {answer!r}"
    assert all(answer in prose for answer in answers)
