"""The one wording of argument checks (echomq_viz.checks)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from echomq_viz.checks import check_bool, check_int, check_str, describe


@pytest.mark.parametrize("value", [3, np.int64(3), np.uint8(3)])
def test_check_int_accepts_every_integer_kind_as_a_plain_int(value):
    result = check_int("priority", value, 1, 5)
    assert result == 3 and type(result) is int


@pytest.mark.parametrize("value", [True, 3.0, "3", None, np.float64(3)])
def test_check_int_refuses_non_integers_with_a_type_error(value):
    with pytest.raises(TypeError, match=r"^priority must be an int, got "):
        check_int("priority", value, 1, 5)


@pytest.mark.parametrize("low, high, value, expected", [
    (1, 2_097_151, 0, "priority must be in 1..2_097_151, got 0"),
    (1, 2_097_151, 2**21, "priority must be in 1..2_097_151, got 2_097_152"),
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
