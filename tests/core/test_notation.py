"""One notation for what a reader sees: powers as superscripts (2²¹ − 1),
thousands with commas (2,097,151), in refusals, readouts and labels alike."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from echomq_viz.core import checks, doubles, notation, score
from echomq_viz.experiments import designs
from echomq_viz.redis_side import scripts
from echomq_viz.figures import visual
from echomq_viz.experiments.live import checked_job
from echomq_viz.widgets import comparison, hero
from echomq_viz.widgets.designs import SWITCH_LABELS
from echomq_viz.widgets.comparison import ComparisonView
from echomq_viz.widgets.double import DoubleView

OLD = re.compile(r"\*\*|\d_\d|\^|\de[+-]\d")  # 2**21, 2_097_151, 2^32, 1.0e+30


def test_power_and_thousands():
    assert notation.power(2, 21) == "2²¹" and notation.power(10, 4300) == "10⁴³⁰⁰"
    assert notation.power(2, -20) == "2⁻²⁰"
    assert notation.power_minus(2, 21, 1) == "2²¹ \u2212 1"
    assert notation.thousands(2**21 - 1) == "2,097,151" and notation.thousands(-5000) == "-5,000"
    assert notation.thousands(999) == "999"


def test_visual_re_exports_the_same_helpers():
    assert visual.power is notation.power and visual.thousands is notation.thousands


def test_the_notation_module_is_pure():
    """No I/O and nothing from outside the standard library: the pure core imports it."""
    tree = ast.parse(Path(notation.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__"}, imported
    for module in (checks, score):
        source = Path(module.__file__).read_text()
        assert "from echomq_viz.core.notation import" in source and "visual" not in source, module.__name__


REFUSALS = {
    "check_int above": lambda: checks.check_int("priority", 2**21, 1, 2**21 - 1, why=score.PRIORITY_LIMIT_TEXT),
    "check_int below": lambda: checks.check_int("lock_ms", -123_456, 1, 2**31 - 1),
    "check_int huge": lambda: checks.check_int("lock_ms", 10**300, 1, 2**31 - 1),
    "check_int huge negative": lambda: checks.check_int("lock_ms", -(2**200), 1),
    "check_int open top": lambda: checks.check_int("count", 2**40, high=10_000_000),
    "check_whole": lambda: checks.check_whole("score", 2.0**60, 0, 2**53 - 1, why=score.MAX_SCORE_TEXT),
    "check_str too long": lambda: checks.check_str("name", "x" * 12_345, max_length=1_000),
    "priority_score priority": lambda: score.priority_score(2**21, 1),
    "priority_score counter": lambda: score.priority_score(1, -1),
    "split_score": lambda: score.split_score(2**53),
    "stored_score": lambda: score.stored_score(10**400, 1),
    "tier_bounds": lambda: score.tier_bounds(2**22),
    "priority_scores_array priorities": lambda: score.priority_scores_array([1, 2**21], [1, 1]),
    "priority_scores_array counters": lambda: score.priority_scores_array([1], [-12_345]),
    "split_scores_array": lambda: score.split_scores_array([1, 2**53]),
    "validate_priority 0": lambda: scripts.validate_priority(0),
    "validate_priority 2**21": lambda: scripts.validate_priority(2**21),
    "validate_priority_counter": lambda: scripts.validate_priority_counter(2**60),
    "checked_job counter": lambda: checked_job("job A", (1, 2**32)),
    "checked_job priority": lambda: checked_job("job B", (2**21, 1)),
    "check_budget": lambda: designs.check_budget(20, 20, 20),
    "double_text counter": lambda: doubles.double_text(1, 2**32),
    "hero score_text": lambda: hero.score_text(2**21, 1),
    "ComparisonView": lambda: ComparisonView(None, a=(1, 2**32), b=(2, 1)),
    "DoubleView": lambda: DoubleView(None, priority=12_345),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_no_refusal_speaks_python(name):
    """Each refusal is one line in the one notation: no 2**21, 2_097_151, 2^32 nor 1.0e+30."""
    with pytest.raises((ValueError, TypeError)) as caught:
        REFUSALS[name]()
    message = str(caught.value)
    assert "\n" not in message, message
    assert not OLD.search(message), message
    assert re.search(r"\d", message), message  # it names a range or a value


def test_the_limits_are_written_as_powers():
    with pytest.raises(ValueError) as caught:
        scripts.validate_priority(2**21)
    assert str(caught.value) == "priority must be in 1..2,097,151 (2²¹ \u2212 1), got 2,097,152"
    with pytest.raises(ValueError) as caught:
        checks.check_int("lock_ms", 10**30, 1, 2**31 - 1)
    assert str(caught.value) == "lock_ms must be in 1..2,147,483,647, got 1.000 × 10³⁰"


def test_readouts_and_labels_use_the_one_notation():
    texts = [hero.score_text(2**21 - 1, 2**32 - 1), comparison.verdict_text((2**21 - 1, 5), (1, 2**32 - 1)),
             doubles.double_text(2**21 + 1, 5), doubles.double_text(0, 1), doubles.half_even_table(),
             *SWITCH_LABELS.values(), *(s.title for s in designs.SCENARIOS), *(s.reason for s in designs.SCENARIOS)]
    for text in texts:
        assert not OLD.search(text), text
    assert hero.score_text(2**21 - 1, 5).startswith("score = 2,097,151 × 0x100000000 + 5\n")
    assert SWITCH_LABELS["nomod"] == "no % 2³²"
    assert "gap to the next double: 2⁻⁵²" in doubles.double_text(0, 1)
