"""The one wording of argument checks (echomq_viz.core.checks)."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from echomq_viz.core.checks import check_bool, check_int, check_str, check_text, check_whole, describe


def assert_refuses(call, error: type[Exception], message: str) -> None:
    """``call()`` raises ``error`` with exactly ``message``, one line (shared by the module tests)."""
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message and len(message.splitlines()) == 1


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3)])
def test_check_int_accepts_every_integer_kind_as_a_plain_int(value):
    result = check_int("priority", value, 1, 5)
    assert result == 3 and type(result) is int


@pytest.mark.parametrize("value", [True, 3.0, "3", None, np.float64(3)])
def test_check_int_refuses_non_integers_with_a_type_error(value):
    with pytest.raises(TypeError, match=r"^priority must be an int, got "):
        check_int("priority", value, 1, 5)


@pytest.mark.parametrize("low, high, value, expected", [
    (1, 2_097_151, 0, "priority must be in 1..2,097,151, got 0"),
    (1, 2_097_151, 2**21, "priority must be in 1..2,097,151, got 2,097,152"),
    (0, None, -1, "priority must be 0 or more, got -1"),
    (None, 10, 11, "priority must be 10 or less, got 11"),
])
def test_check_int_names_the_range_and_the_value(low, high, value, expected):
    with pytest.raises(ValueError) as caught:
        check_int("priority", value, low, high)
    assert str(caught.value) == expected


@given(st.integers(), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_check_int_accepts_exactly_the_closed_range(value, low, high):
    inside = low <= value <= high
    if inside:
        assert check_int("n", value, low, high) == value
    else:
        with pytest.raises(ValueError):
            check_int("n", value, low, high)


def test_check_str():
    assert check_str("job name", "email") == "email"
    assert check_str("job id", "", empty=True) == ""
    with pytest.raises(ValueError, match="^job name must not be empty$"):
        check_str("job name", "")
    with pytest.raises(TypeError, match="^job name must be a str, got int 5$"):
        check_str("job name", 5)


def test_check_bool_refuses_ints():
    assert check_bool("lifo", False) is False
    with pytest.raises(TypeError, match="^lifo must be True or False, got int 1$"):
        check_bool("lifo", 1)


def test_describe_keeps_messages_to_one_short_line():
    text = describe("x" * 500)
    assert len(text) < 80 and "\n" not in describe("a\nb")
    # a repr of 60 characters is shown whole; one of 61 is cut to 57 and "..."
    assert describe("x" * 58) == "str '" + "x" * 58 + "'"
    assert describe("x" * 59) == "str '" + "x" * 56 + "..."


# -- the reasons, lengths, text and whole numbers every module's checks are built on -----------


def test_check_int_gives_the_reason_of_a_range_in_brackets():
    with pytest.raises(ValueError) as caught:
        check_int("priority", 2**21, 1, 2**21 - 1, why="2²¹ − 1")
    assert str(caught.value) == "priority must be in 1..2,097,151 (2²¹ − 1), got 2,097,152"
    assert check_int("priority", np.uint64(5), 1, 9, why="unused when the value is good") == 5


def test_check_str_names_the_length_range():
    assert check_str("queue name", "q" * 100, max_length=100) == "q" * 100
    with pytest.raises(ValueError) as caught:
        check_str("queue name", "é" * 101, max_length=100)
    assert str(caught.value) == "queue name must be 1..100 characters, got 101"
    with pytest.raises(ValueError) as caught:
        check_str("note", "x" * 12, empty=True, max_length=10, why="it fits one line")
    assert str(caught.value) == "note must be 0..10 characters (it fits one line), got 12"


def test_check_text_refuses_what_utf8_cannot_encode():
    assert check_text("job name", "émail ✉") == "émail ✉"
    with pytest.raises(ValueError) as caught:
        check_text("job name", "a\ud800b")
    assert str(caught.value) == (
        "job name must be UTF-8 encodable, got str 'a\\ud800b' holding the lone surrogate '\\ud800'"
    )
    with pytest.raises(TypeError) as caught:
        check_text("job name", b"a")
    assert str(caught.value) == "job name must be a str, got bytes b'a'"
    with pytest.raises(ValueError, match="^lock token must not be empty$"):
        check_text("lock token", "")


@pytest.mark.parametrize("value, expected", [
    (7, 7), (np.int64(7), 7), (7.0, 7), (np.float64(2.0**53), 2**53),
])
def test_check_whole_takes_ints_and_floats_holding_whole_numbers(value, expected):
    result = check_whole("score", value, 0)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value, error, expected", [
    (True, TypeError, "score must be an int or a float, got bool True"),
    ("5", TypeError, "score must be an int or a float, got str '5'"),
    (1.5, ValueError, "score must be a whole number, got float 1.5"),
    (math.nan, ValueError, "score must be a whole number, got float nan"),
    (-math.inf, ValueError, "score must be a whole number, got float -inf"),
    (-1.0, ValueError, "score must be 0 or more, got -1"),
    (2**53, ValueError, "score must be in 0..9,007,199,254,740,991 (2⁵³ − 1), got 9,007,199,254,740,992"),
])
def test_check_whole_refuses_with_one_line(value, error, expected):
    with pytest.raises(error) as caught:
        check_whole("score", value, 0, 2**53 - 1 if value == 2**53 else None,
                    why="2⁵³ − 1" if value == 2**53 else "")
    assert str(caught.value) == expected


@pytest.mark.parametrize("value, shown", [
    (2**99 - 1, "633,825,300,114,114,700,748,351,602,687"),
    (2**99, "6.338 × 10²⁹"), (10**30, "1.000 × 10³⁰"), (-(2**200), "-1.607 × 10⁶⁰"), (10**4300, "1.000 × 10⁴³⁰⁰"),
    (10**31 - 1, "1.000 × 10³¹"),
], ids=["2⁹⁹ − 1", "2**99", "10**30", "-2**200", "10**4300", "10**31 - 1"])
def test_a_huge_int_is_shown_short(value, shown):
    with pytest.raises(ValueError) as caught:
        check_int("lock_ms", value, 1, 2**31 - 1)
    assert str(caught.value) == f"lock_ms must be in 1..2,147,483,647, got {shown}"
