# Pure tests of the composite priority score (echomq_viz.core.score); no Redis.
# Expected values come from the protocol definition computed with Python ints
# (bit shifts and masks), or from an independent IEEE-754 rounding helper,
# never from running the code under test.

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from test_checks import assert_refuses
from echomq_viz.core.score import (
    COUNTER_MASK, EXACT_LIMIT, MAX_SCORE, PRIORITY_LIMIT, TIER_SPAN, is_exact, priority_score,
    priority_scores_array, split_score, split_scores_array, split_stored, stored_score, tier_bounds,
)

# The protocol numbers, written out by hand so a wrong constant cannot hide.
P_MAX = 2_097_151  # 2**21 - 1
C_MAX = 4_294_967_295  # 2**32 - 1

priorities = st.integers(min_value=0, max_value=P_MAX)
counters = st.integers(min_value=0, max_value=C_MAX)
# INCR can go far past 2**32; only the low 32 bits may enter the score.
big_counters = st.integers(min_value=0, max_value=2**64)
# Counters a double holds exactly, so Lua's % on them is still exact.
double_counters = st.integers(min_value=0, max_value=2**53)

FAST = settings(max_examples=500, deadline=None)


def expected_score(p: int, c: int) -> int:
    # Bit layout from the protocol: tier in the high bits, counter in the low 32.
    return (p << 32) | (c & 0xFFFF_FFFF)


def nearest_double(n: int) -> int:
    # Round a non-negative int to 53 significant bits, ties to even (IEEE-754 default).
    extra = n.bit_length() - 53
    if extra <= 0:
        return n
    q, r = divmod(n, 1 << extra)
    half = 1 << (extra - 1)
    if r > half or (r == half and q % 2 == 1):
        q += 1
    return q << extra


def test_nearest_double_helper_matches_protocol_examples():
    # The helper must reproduce the protocol's half-to-even examples before we trust it.
    base = 2**53
    assert [nearest_double(base + c) - base for c in (0, 1, 2, 3, 5, 7)] == [0, 0, 2, 4, 4, 8]
    # And agree with an exact rational check: the result is a double and the nearest one.
    for c in range(0, 40):
        n = base + c
        got = nearest_double(n)
        assert Fraction(float(got)) == got
        assert abs(got - n) <= 1


# -- constants ------------------------------------------------------------------


def test_constants_match_protocol():
    assert TIER_SPAN == 0x100000000 == 2**32
    assert COUNTER_MASK == 2**32 - 1
    assert EXACT_LIMIT == 2**53
    assert PRIORITY_LIMIT == P_MAX
    assert MAX_SCORE == 2**53 - 1
    # The largest score is exactly representable, the next integer is the first that is not safe.
    assert float(MAX_SCORE) == MAX_SCORE
    assert float(2**53 + 1) != 2**53 + 1


# -- exact maths (hypothesis) -------------------------------------------------------


@FAST
@given(priorities, counters, priorities, counters)
@example(0, 0, 0, 1)
@example(0, C_MAX, 1, 0)
@example(P_MAX - 1, C_MAX, P_MAX, 0)
@example(P_MAX, C_MAX - 1, P_MAX, C_MAX)
def test_score_order_is_tuple_order(p1, c1, p2, c2):
    # One sorted-set score must sort exactly like the (tier, arrival) pair.
    s1, s2 = priority_score(p1, c1), priority_score(p2, c2)
    assert (s1 < s2) == ((p1, c1) < (p2, c2))
    assert (s1 == s2) == ((p1, c1) == (p2, c2))


@FAST
@given(priorities, big_counters)
@example(P_MAX, C_MAX)
@example(P_MAX, 2**32)
@example(0, 2**64)
def test_split_inverts_score(p, c):
    # Only counter mod 2**32 survives, also for counters past 2**32.
    score = priority_score(p, c)
    assert score == expected_score(p, c)
    assert split_score(score) == (p, c % 2**32)
    assert 0 <= score <= MAX_SCORE


@FAST
@given(priorities, double_counters)
@example(P_MAX, C_MAX)
@example(P_MAX, 2**53)
@example(0, 0)
def test_stored_score_exact_for_valid_priorities(p, c):
    # Below the limit the double Lua stores is the exact int, so nothing rounds.
    stored = stored_score(p, c)
    assert isinstance(stored, float)
    assert stored == float(priority_score(p, c))
    assert stored == expected_score(p, c)  # float == int compares exactly in Python
    assert is_exact(p, c) is True


@FAST
@given(priorities)
def test_score_lies_inside_its_tier(p):
    lo, hi = tier_bounds(p)
    assert (lo, hi) == (p << 32, (p << 32) | 0xFFFF_FFFF)
    assert priority_score(p, 0) == lo
    assert priority_score(p, C_MAX) == hi


@FAST
@given(st.integers(min_value=0, max_value=P_MAX - 1))
def test_tiers_are_adjacent(p):
    # Largest score of tier p is one below the smallest of tier p + 1: no gap, no overlap.
    assert tier_bounds(p)[1] + 1 == tier_bounds(p + 1)[0]


def test_last_tier_ends_at_max_score():
    assert tier_bounds(P_MAX) == (P_MAX * 2**32, 2**53 - 1)
    with pytest.raises(ValueError):
        tier_bounds(P_MAX + 1)


# -- boundaries -----------------------------------------------------------------


@pytest.mark.parametrize("p", [0, 1, P_MAX])
@pytest.mark.parametrize(
    "c, low_bits",
    [(0, 0), (1, 1), (2**31, 2**31), (2**32 - 1, 2**32 - 1), (2**32, 0), (2**32 + 1, 1)],
)
def test_boundary_scores(p, c, low_bits):
    # Low bits are written out by hand: 2**32 wraps to 0, 2**31 stays positive (#2597).
    assert priority_score(p, c) == p * 4_294_967_296 + low_bits
    assert split_score(priority_score(p, c)) == (p, low_bits)
    assert stored_score(p, c) == p * 4_294_967_296 + low_bits


def test_counter_two_pow_31_sorts_after_its_predecessor():
    # BullMQ #2597: a signed 32-bit mask made 2**31 negative and jump the queue.
    assert priority_score(5, 2**31) > priority_score(5, 2**31 - 1)


def test_counter_wrap_jumps_ahead_within_tier():
    # Documented limitation: after 2**32 adds the counter part wraps to the front.
    assert priority_score(3, 2**32) < priority_score(3, 2**32 - 1)


def test_max_score_is_largest_valid():
    assert priority_score(P_MAX, C_MAX) == MAX_SCORE == 2**53 - 1
    assert split_score(MAX_SCORE) == (P_MAX, C_MAX)
    assert split_score(float(MAX_SCORE)) == (P_MAX, C_MAX)


# -- past the limit: what Lua stores at priority 2**21 and beyond ------------------


@pytest.mark.parametrize("c", range(0, 65))
def test_priority_two_pow_21_rounds_half_to_even(c):
    # 2**53 + c has spacing 2 between doubles; odd counters tie and go to the even mantissa.
    stored = stored_score(2**21, c)
    assert stored == nearest_double(2**53 + c)
    assert is_exact(2**21, c) is (c % 2 == 0)


@pytest.mark.parametrize("c, offset", [(1, 0), (3, 4), (5, 4), (7, 8)])
def test_protocol_rounding_examples(c, offset):
    # The exact examples of the protocol's rounding rule.
    assert stored_score(2**21, c) == 2**53 + offset


@pytest.mark.parametrize("c", range(0, 65))
def test_priority_two_pow_22_rounds_to_multiples_of_four(c):
    # One binade up the spacing is 4: only counters divisible by 4 survive.
    stored = stored_score(2**22, c)
    assert stored == nearest_double(2**54 + c)
    assert int(stored) % 4 == 0
    assert is_exact(2**22, c) is (c % 4 == 0)


def test_jobs_collide_past_the_limit():
    # Several arrivals share one score, so Redis falls back to member order and FIFO breaks.
    scores = [stored_score(2**21, c) for c in range(1, 65)]
    assert stored_score(2**21, 3) == stored_score(2**21, 4) == stored_score(2**21, 5)
    assert stored_score(2**21, 0) == stored_score(2**21, 1)
    assert len(set(scores)) < len(scores)
    # Rounding is monotonic: it merges neighbours but never swaps them.
    assert scores == sorted(scores)
    # Whereas one tier lower every counter keeps its own score.
    assert len({stored_score(P_MAX, c) for c in range(1, 65)}) == 64


@FAST
@given(st.integers(min_value=P_MAX + 1, max_value=2**40), double_counters)
@example(2**21, 1)
@example(2**21, C_MAX)
def test_stored_score_is_one_rounding_of_exact_score(p, c):
    # Lua: p * 2**32 and c % 2**32 are exact, only the final + rounds (to nearest, ties even).
    exact = p * 2**32 + c % 2**32
    assert stored_score(p, c) == nearest_double(exact)
    assert is_exact(p, c) is (nearest_double(exact) == exact)


# -- argument errors --------------------------------------------------------------


def _names_range(message: str) -> bool:
    return "2,097,151" in message or "2097151" in message


@pytest.mark.parametrize(
    "bad",
    [True, False, 1.0, 2.5, "3", None, np.float64(1.0), np.bool_(True), [1]],
    ids=repr,
)
def test_priority_score_rejects_non_int_priority(bad):
    with pytest.raises(TypeError, match="int"):
        priority_score(bad, 1)


@pytest.mark.parametrize("bad", [-1, -(2**40), P_MAX + 1, 2**21, 2**64])
def test_priority_score_rejects_out_of_range_priority(bad):
    with pytest.raises(ValueError) as info:
        priority_score(bad, 1)
    assert _names_range(str(info.value))


@pytest.mark.parametrize("bad", [True, 1.0, "1", None, np.float64(2.0)], ids=repr)
def test_priority_score_rejects_non_int_counter(bad):
    with pytest.raises(TypeError, match="counter"):
        priority_score(1, bad)


def test_priority_score_rejects_negative_counter():
    with pytest.raises(ValueError) as info:
        priority_score(1, -1)
    assert str(info.value) == "counter must be 0 or more (an INCR value), got -1"


@pytest.mark.parametrize("int_type", [np.int8, np.int32, np.int64, np.uint32, np.uint64])
def test_numpy_integers_are_accepted(int_type):
    # numpy ints are real integers (numbers.Integral) and must not be refused.
    got = priority_score(int_type(7), int_type(9))
    assert got == (7 << 32) | 9
    assert type(got) is int
    assert split_score(int_type(9)) == (0, 9)


@pytest.mark.parametrize("bad", [-1, 2**21, P_MAX + 1])
def test_tier_bounds_rejects_out_of_range(bad):
    with pytest.raises(ValueError) as info:
        tier_bounds(bad)
    assert _names_range(str(info.value))


@pytest.mark.parametrize("bad", [-1, True, 1.0, "2"], ids=repr)
def test_stored_score_rejects_bad_priority_even_without_upper_limit(bad):
    with pytest.raises((TypeError, ValueError)):
        stored_score(bad, 0)
    with pytest.raises((TypeError, ValueError)):
        is_exact(bad, 0)


@pytest.mark.parametrize(
    "bad",
    [-1, -1.0, 0.5, 1.5, float(2**40) + 0.5, math.nan, math.inf, -math.inf,
     MAX_SCORE + 1, float(2**53), 2**64],
    ids=repr,
)
def test_split_score_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        split_score(bad)


@pytest.mark.parametrize("bad", [True, False, "5", None, b"5", [5]], ids=repr)
def test_split_score_rejects_non_numbers(bad):
    with pytest.raises(TypeError):
        split_score(bad)


def test_split_score_accepts_whole_floats_as_redis_returns_them():
    score = (12 << 32) | 34
    assert split_score(float(score)) == (12, 34)
    assert split_score(np.float64(score)) == (12, 34)
    assert split_score(0.0) == (0, 0)


# -- numpy versions -----------------------------------------------------------------

pairs = st.lists(st.tuples(priorities, counters), max_size=40)


def _arrays(rows, dtype):
    p = np.array([r[0] for r in rows], dtype=dtype)
    c = np.array([r[1] for r in rows], dtype=dtype)
    return p, c


@settings(max_examples=300, deadline=None)
@given(pairs)
@example([(P_MAX, C_MAX), (0, 0), (P_MAX, 0), (0, C_MAX)])
def test_score_arrays_agree_with_scalars(rows):
    for dtype in (np.uint64, np.int64):
        p, c = _arrays(rows, dtype)
        scores = priority_scores_array(p, c)
        assert scores.dtype == np.uint64
        assert scores.shape == (len(rows),)
        assert [int(s) for s in scores] == [priority_score(pi, ci) for pi, ci in rows]
        back_p, back_c = split_scores_array(scores)
        assert back_p.dtype == back_c.dtype == np.uint64
        assert [int(x) for x in back_p] == [pi for pi, _ in rows]
        assert [int(x) for x in back_c] == [ci for _, ci in rows]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(priorities, st.integers(0, 2**62)), max_size=40))
def test_score_arrays_mask_large_counters(rows):
    # Counters past 2**32 lose their high bits, exactly as the scalar function.
    p, c = _arrays(rows, np.uint64)
    scores = priority_scores_array(p, c)
    assert [int(s) for s in scores] == [expected_score(pi, ci) for pi, ci in rows]


@settings(max_examples=300, deadline=None)
@given(pairs)
@example([(P_MAX, C_MAX)])
def test_split_arrays_of_whole_floats(rows):
    # Redis hands scores back as doubles; whole ones up to 2**53 - 1 must split exactly.
    exact = [expected_score(pi, ci) for pi, ci in rows]
    floats = np.array([float(s) for s in exact], dtype=np.float64)
    back_p, back_c = split_scores_array(floats)
    assert [int(x) for x in back_p] == [split_score(float(s))[0] for s in exact]
    assert [int(x) for x in back_c] == [split_score(float(s))[1] for s in exact]
    assert [(int(a), int(b)) for a, b in zip(back_p, back_c)] == list(rows)


def test_score_arrays_at_max_values():
    p = np.array([P_MAX, P_MAX, 0], dtype=np.uint64)
    c = np.array([C_MAX, 0, C_MAX], dtype=np.uint64)
    got = priority_scores_array(p, c)
    assert got.tolist() == [2**53 - 1, 2**53 - 2**32, 2**32 - 1]
    bp, bc = split_scores_array(np.array([float(2**53 - 1)]))
    assert (int(bp[0]), int(bc[0])) == (P_MAX, C_MAX)


def test_score_arrays_broadcast_a_scalar_priority():
    got = priority_scores_array(3, np.arange(4, dtype=np.int64))
    assert got.tolist() == [(3 << 32) | i for i in range(4)]


def test_score_arrays_accept_empty_input():
    assert priority_scores_array(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).size == 0
    p, c = split_scores_array(np.array([], dtype=np.float64))
    assert p.size == c.size == 0


@pytest.mark.parametrize(
    "p",
    [np.array([True, False]), np.array([1.0, 2.0]), np.array(["1", "2"]), [1.5, 2.0]],
    ids=["bool", "float", "str", "float-list"],
)
def test_score_arrays_reject_non_integer_priorities(p):
    with pytest.raises(TypeError):
        priority_scores_array(p, np.array([1, 2]))


@pytest.mark.parametrize(
    "c", [np.array([True, False]), np.array([1.0, 2.0])], ids=["bool", "float"]
)
def test_score_arrays_reject_non_integer_counters(c):
    with pytest.raises(TypeError):
        priority_scores_array(np.array([1, 2]), c)


@pytest.mark.parametrize("p", [[-1, 0], [0, P_MAX + 1], [2**21]])
def test_score_arrays_reject_out_of_range_priorities(p):
    with pytest.raises(ValueError) as info:
        priority_scores_array(np.array(p, dtype=np.int64), np.zeros(len(p), dtype=np.int64))
    assert _names_range(str(info.value))


def test_score_arrays_reject_negative_counters():
    with pytest.raises(ValueError):
        priority_scores_array(np.array([1, 1]), np.array([0, -1]))


@pytest.mark.parametrize(
    "scores",
    [
        np.array([-1], dtype=np.int64),
        np.array([2**53], dtype=np.int64),
        np.array([2**64 - 1], dtype=np.uint64),
        np.array([1.5]),
        np.array([math.nan]),
        np.array([math.inf]),
        np.array([-2.0]),
        np.array([float(2**53)]),
    ],
    ids=["neg", "2**53", "uint64-max", "fraction", "nan", "inf", "neg-float", "2**53-float"],
)
def test_split_arrays_reject_bad_values(scores):
    with pytest.raises(ValueError):
        split_scores_array(scores)


@pytest.mark.parametrize(
    "scores", [np.array([True]), np.array(["1"]), np.array([1 + 2j])], ids=["bool", "str", "complex"]
)
def test_split_arrays_reject_non_real_dtypes(scores):
    with pytest.raises(TypeError):
        split_scores_array(scores)


# -- one wording: the exact one-line message of every refusal ------------------------------------

EXACT_REFUSALS = {
    "priority 2**21": (lambda: priority_score(2**21, 1), ValueError,
                       "priority must be in 0..2,097,151 (2²¹ − 1), got 2,097,152"),
    "priority True": (lambda: priority_score(True, 1), TypeError, "priority must be an int, got bool True"),
    "counter 1.0": (lambda: priority_score(1, 1.0), TypeError, "counter must be an int, got float 1.0"),
    "tier_bounds -1": (lambda: tier_bounds(-1), ValueError, "priority must be in 0..2,097,151 (2²¹ − 1), got -1"),
    # no upper bound here: the range has none, and says so
    "stored_score priority -1": (lambda: stored_score(-1, 0), ValueError, "priority must be 0 or more, got -1"),
    "is_exact counter -5": (lambda: is_exact(1, -5), ValueError, "counter must be 0 or more (an INCR value), got -5"),
    "split_score 1.5": (lambda: split_score(1.5), ValueError, "score must be a whole number, got float 1.5"),
    "split_score 2**53": (lambda: split_score(2**53), ValueError,
                          "score must be in 0..9,007,199,254,740,991 (2⁵³ − 1), got 9,007,199,254,740,992"),
    "split_score '5'": (lambda: split_score("5"), TypeError, "score must be an int or a float, got str '5'"),
    "split_stored -1.0": (lambda: split_stored(-1.0), ValueError, "score must be 0 or more, got -1"),
    "split_stored inf": (lambda: split_stored(math.inf), ValueError, "score must be a whole number, got float inf"),
    "arrays: priority -1": (lambda: priority_scores_array([-1, 3], [1, 2]), ValueError,
                            "priorities must be in 0..2,097,151 (2²¹ − 1), got -1..3"),
    "arrays: counter -1": (lambda: priority_scores_array([1, 3], [-1, 2]), ValueError,
                           "counters must be 0 or more (INCR values), got -1"),
    "arrays: float priorities": (lambda: priority_scores_array([1.0], [1]), TypeError,
                                 "priorities must be an integer array, got dtype float64"),
    "arrays: score 2**53": (lambda: split_scores_array(np.array([1, 2**53])), ValueError,
                            "scores must be in 0..9,007,199,254,740,991 (2⁵³ − 1), got 1..9,007,199,254,740,992"),
    "arrays: score 0.5": (lambda: split_scores_array([0.5]), ValueError, "scores must be whole numbers, got 0.5"),
}


@pytest.mark.parametrize("case", EXACT_REFUSALS, ids=list(EXACT_REFUSALS))
def test_every_refusal_is_one_line_in_the_one_wording(case):
    assert_refuses(*EXACT_REFUSALS[case])


def test_the_largest_priority_counter_keeps_the_next_incr_exact():
    # INCR pc must give at most 2**53 - 1, the largest counter a double holds exactly.
    from echomq_viz.core.score import MAX_PRIORITY_COUNTER

    assert MAX_PRIORITY_COUNTER + 1 == 2**53 - 1 == float(MAX_PRIORITY_COUNTER + 1)


@pytest.mark.parametrize("priority, counter, error, words", [
    (10**400, 1, ValueError, "priority × 2³² must be a finite double"),
    (1, 2**64, ValueError, "counter must be 9,223,372,036,854,775,807 or less (an INCR value)"),
])
def test_stored_score_refuses_what_no_double_or_incr_can_hold(priority, counter, error, words):
    with pytest.raises(error) as caught:
        stored_score(priority, counter)
    assert words in str(caught.value) and "\n" not in str(caught.value) and len(str(caught.value)) < 160
