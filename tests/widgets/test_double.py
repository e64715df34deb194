"""The IEEE double behind a score (echomq_viz.core.doubles, double_plots and widgets.double), checked against real Redis."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from echomq_viz.figures import double_plots
from echomq_viz.core.doubles import double_text, half_even_table, round_score
from echomq_viz.experiments.live import Demo
from echomq_viz.core.score import PRIORITY_LIMIT, TIER_SPAN, stored_score
from echomq_viz.redis_side.server import RedisServer
from echomq_viz.widgets import DoubleView, FrontierView
from page_runner import page_calls


@pytest.fixture
def demo(r) -> Demo:
    return Demo("viz-test-double", client=r)


# -- the bits ------------------------------------------------------------------------------


def test_the_three_fields_are_the_bits_struct_packs():
    assert double_plots.double_bits(1.0) == "0" + "01111111111" + "0" * 52
    assert double_plots.double_fields(2.0**53) == (0, 1023 + 53, 0)
    assert double_plots.double_fields(2.0**53 - 1) == (0, 1023 + 52, 2**52 - 1)
    assert double_plots.double_fields(-3.0) == (1, 1024, 2**51)
    for value in (1.5, 2.0**53 + 2, 12_884_901_889.0):
        word = int(double_plots.double_bits(value), 2)
        assert struct.pack(">Q", word) == struct.pack(">d", value)


def test_the_bits_past_the_mantissa_fall_off():
    assert double_plots.exact_bits(2**53 - 1) == ("1" * 52, "")
    assert double_plots.exact_bits(2**53 + 1) == ("0" * 52, "1")
    assert double_plots.exact_bits(2**56 + 7) == ("0" * 52, "0111")
    assert double_plots.exact_bits(5) == ("01".ljust(52, "0"), "")
    with pytest.raises(ValueError, match="a whole number >= 1"):
        double_plots.exact_bits(0)


def test_the_spacing_doubles_at_every_power_of_two_from_2_to_the_53():
    assert [double_plots.spacing(2.0**e) for e in (52, 53, 54, 55)] == [1, 2, 4, 8]
    assert double_plots.spacing(2.0**53 - 1) == 1 == np.spacing(2.0**53 - 1)
    assert double_plots.spacing(2.0**53) == np.spacing(2.0**53)


def test_the_budget_bar_paints_bits_past_53_red():
    def codes(widths):  # one code per bit, bit 63 first
        return double_plots._budget_codes(widths)[0][::8]

    assert list(codes((11, 10, 32))[:11]) == [0] * 11 and 4 not in codes((11, 10, 32))
    wide = codes((11, 11, 32))  # 54 bits: bit 53 is used
    assert wide[63 - 53] == 4 and list(wide[63 - 52:]).count(4) == 0
    assert list(wide[-32:]) == [3] * 32 and list(wide[63 - 42:63 - 31]) == [2] * 11


# -- rounding, half to even --------------------------------------------------------------


def test_ties_go_to_the_even_mantissa_at_priority_2_to_the_21():
    rounded = {c: round_score(2**21, c) for c in range(1, 8)}
    assert {c: r.way for c, r in rounded.items()} == {
        1: "down", 2: "exact", 3: "up", 4: "exact", 5: "down", 6: "exact", 7: "up"}
    for c, r in rounded.items():
        if r.way != "exact":
            assert r.tie and (r.below, r.above) == (c - 1, c + 1)
            stored = float(2**21 * TIER_SPAN + r.stored)
            assert double_plots.double_fields(stored)[2] & 1 == 0  # the even one won
    table = half_even_table()
    assert "3        2 (…1)        4 (…0)       4  up, a tie: to the even mantissa (…0)" in table
    assert "5        4 (…0)        6 (…1)       4  down, a tie" in table


def test_at_2_to_the_22_only_the_middle_counter_is_a_tie():
    rounded = [round_score(2**22, c) for c in range(0, 9)]
    assert [r.stored for r in rounded] == [0, 0, 0, 4, 4, 4, 8, 8, 8]
    assert [r.tie for r in rounded] == [False, False, True, False, False, False, True, False, False]


def test_the_rounding_table_is_what_redis_stores(demo):
    for counter in range(1, 8):
        _, stored = demo.add_past_the_limit_for_teaching(f"c{counter}", 2**21, counter)
        assert int(stored) - 2**21 * TIER_SPAN == round_score(2**21, counter).stored


def test_round_score_refuses_bad_input():
    with pytest.raises(ValueError, match="counter must be in 0..4,294,967,295, got 4,294,967,296"):
        round_score(2**21, 2**32)
    with pytest.raises(TypeError, match="priority must be an int, got float"):
        half_even_table(2.0**21)


# -- the view, drawn in the page -----------------------------------------------------------------

POSITIONS = [(2**21, 1), (PRIORITY_LIMIT, 2**32 - 1), (2**22, 2), (2**22, 1), (2**24, 7), (2**21, 0),
             (2**21 - 2, 5), (2**24, 2**32 - 1)]


def _state(view) -> dict:
    return {k: v for k, v in view.figure.get_state().items() if not k.startswith("_")}


def test_the_page_says_what_python_says_of_every_position(tmp_path):
    views = [DoubleView(None, priority=p, counter=c) for p, c in POSITIONS]
    calls = [(name, _state(view)) for view in views for name in ("describe", "readout", "still")]
    results = page_calls("double", calls, tmp_path)
    for view, (described, readout, svg) in zip(views, zip(*[iter(results)] * 3)):
        assert described == view.describe() and readout == view.readout_text() == double_text(*POSITIONS[views.index(view)])
        assert svg.startswith("<svg") and f"<title>{view.describe()}</title>" in svg


def test_the_figure_names_the_two_doubles_and_the_tie(tmp_path):
    svgs = page_calls("double", [("still", _state(DoubleView(priority=p, counter=c)))
                                 for p, c in [(2**21, 1), (2**22, 1), (PRIORITY_LIMIT, 2**32 - 1)]], tmp_path)
    tie, nearer, exact = svgs
    assert "exponent 53: 1 bit falls off; stored −1 from the exact score" in tie
    assert "a tie, which goes to the one whose mantissa ends in 0" in tie
    assert f"{2**53:,} (mantissa …0): stored" in tie and f"{2**53 + 2:,} (mantissa …1)<" in tie
    assert "goes to the nearer one" in nearer and f"{2**54:,} (mantissa …0): stored" in nearer
    assert "exponent 52: nothing falls off; stored exactly" in exact and "a double itself" in exact
    assert ">here: 2<" in tie and ">here: 4<" in nearer and ">here: 1<" in exact


def test_moving_across_2_to_the_53_changes_the_readout_and_caption():
    view = DoubleView(priority=PRIORITY_LIMIT, counter=2**32 - 1)
    assert "gap to the next double: 1" in view.readout_text() and "(exact)" in view.readout_text()
    assert view.describe().startswith(f"The 64 bits of the double stored for the score {2**53 - 1:,} (priority "
                                      "2,097,151, counter 4,294,967,295): exponent 52, every bit of it fits the "
                                      "mantissa, stored exactly.")
    view.set(priority=2**21, counter=1)
    text = view.readout_text()
    assert "stored double 9,007,199,254,740,992 (-1)" in text and "fall off: 1" in text
    assert "gap to the next double: 2" in text and "1076 − 1023 = 53" in text
    assert ("exponent 53, 1 bit of it falls off past the mantissa, stored -1 from it: it lay halfway between two "
            "doubles and went to the one whose mantissa ends in 0.") in view.describe()
    view.set(priority=2**24, counter=7)
    assert "4 bits of it fall off" in view.describe() and view.describe().endswith("here 16.")
    assert "fall off: 0111" in view.readout_text()


def test_double_text_matches_the_stored_score():
    text = double_text(3, 5)
    assert f"stored double {3 * 2**32 + 5:,} (exact)" in text
    assert double_plots.double_bits(stored_score(3, 5))[12:] in text


def test_the_view_follows_the_frontier_priority():
    frontier = FrontierView(priority=2**21)
    view = DoubleView(priority=PRIORITY_LIMIT).follow(frontier)
    assert view.priority == 2**21  # the link takes the frontier's value
    assert view.figure.link == frontier.figure.link != ""  # the page moves both, the kernel told nothing
    frontier.set(priority=2**23)
    assert view.priority == 2**23 and "gap to the next double: 8" in view.readout_text()
    view.figure.set_state({"priority": 2**22})  # the double's button sends its priority: the frontier follows
    assert frontier.priority == 2**22
    with pytest.raises(TypeError, match="frontier must be a FrontierView"):
        view.follow(view)


def test_bad_input_moves_no_slider():
    view = DoubleView(priority=2**21, counter=3)
    for kwargs, error in (({"priority": 2**21 + 5}, ValueError), ({"counter": 2**32}, ValueError),
                          ({"priority": True}, TypeError), ({"priority": 2.0**21}, TypeError),
                          ({"counter": 1.0}, TypeError)):
        with pytest.raises(error):
            view.set(**kwargs, **({"counter": 9} if "priority" in kwargs else {"priority": 2**22}))
        assert (view.priority, view.counter) == (2**21, 3)
    with pytest.raises(ValueError, match="priority must be one of"):
        DoubleView(priority=7)


@pytest.mark.parametrize("sent, line", [
    ({"priority": 2**21 + 5}, "refused priority must be one of 2,097,150"),
    ({"counter": 2**32}, "refused counter 4294967296: it must be a whole number in 0..4,294,967,295"),
    ({"counter": -1}, "refused counter -1"),
    ({"counter": 1.5}, "refused counter 1.5"),
])
def test_a_value_from_the_page_outside_the_kernels_bounds_is_refused_in_one_line(demo, keyspace, sent, line):
    view = DoubleView(demo, priority=2**21, counter=3)
    before = keyspace()
    view.figure._handle_custom_msg({"kind": "run", "priority": 2**21, "counter": 3, **sent}, [])
    assert keyspace() == before and view.figure.answer == {}  # nothing stored for a refused value
    assert view.figure.status.startswith(line) and "\n" not in view.figure.status
    assert (view.priority, view.counter) == (2**21, 3)
    if not isinstance(sent.get("counter"), float):  # a float is refused by the trait's type itself
        view.figure.set_state(sent)
        assert view.figure.status.startswith(line) and (view.priority, view.counter) == (2**21, 3)


def test_the_button_stores_the_pages_values_and_the_page_finds_the_same_64_bits(demo, tmp_path):
    view = DoubleView(demo, priority=PRIORITY_LIMIT, counter=0)
    view.figure._handle_custom_msg({"kind": "run", "priority": 2**21, "counter": 7}, [])
    assert (view.priority, view.counter) == (2**21, 7) and view.figure.status == ""
    assert view.figure.answer["bits"] == double_plots.double_bits(2.0**53 + 8) and view.figure.answer["stored"] == str(2**53 + 8)
    assert view.redis_text.endswith("the same 64 bits")
    (said,) = page_calls("double", [("answerLine", _state(view))], tmp_path)
    assert said == [f"Redis stored {2**53 + 8:,}: the same 64 bits as the page's double", "good"]
    view.set(priority=PRIORITY_LIMIT - 1, counter=2**32 - 1)
    assert view.check_on_redis() == (PRIORITY_LIMIT - 1) * TIER_SPAN + 2**32 - 1
    view.set(counter=5)
    (said,) = page_calls("double", [("answerLine", _state(view))], tmp_path)
    assert said[0].endswith(f"(for priority 2,097,150, counter 4,294,967,295)")


def test_a_view_without_a_demo_or_redis_says_so_in_one_line():
    view = DoubleView()
    assert view.figure.redis_enabled is False
    with pytest.raises(RuntimeError, match="made without a Demo"):
        view.check_on_redis()
    server = RedisServer().start()
    client = server.client(socket_timeout=1, socket_connect_timeout=1)
    lost = DoubleView(Demo("viz-test-double", client=client))
    server.stop()
    lost.figure._handle_custom_msg({"kind": "run", "priority": 2**21, "counter": 1}, [])
    assert lost.status.text.startswith("error: ConnectionError") and "\n" not in lost.status.text
    assert lost.figure.status == lost.status.text
    assert math.isfinite(lost.stored)
