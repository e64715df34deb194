"""The page's score.js computes what Python computes, bit for bit, on 100,000 cases.

The views draw in the browser, so the page works out scores itself
(``echomq_viz/widgets/page/score.js``). A reader must see there the same
score, the same stored double and the same digits as the Python core shows:
a rounding that differs past 2**53, or a counter wrap done differently, would
make the page contradict the notebooks. The cases come from a fixed seed and
aim at where the two could part: small values, the 2**53 frontier, priorities
far above it, counters at and past the 2**32 wrap up to INCR's limit, scores
exactly half-way between two doubles (ties to even), and a spread over the
whole range ``stored_score`` accepts. One Node process
(``page_score_cases.mjs``) compares every case and reports the mismatches.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from echomq_viz.core.notation import power, thousands
from echomq_viz.core.score import (
    FINITE_PRIORITY_LIMIT, INCR_LIMIT, MAX_SCORE, PRIORITY_LIMIT, TIER_SPAN,
    is_exact, priority_score, split_score, split_stored, stored_score,
)
from echomq_viz.figures.plots import format_hex
from echomq_viz.widgets.page_modules import PAGE, page_module
from page_runner import node_or_skip

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "page_score_cases.mjs"
SEED = 20_250_601
N = 100_000
POWERS = [(2, 53), (2, 32), (2, 21), (2, 0), (10, -3), (2, 1023), (16, 10)]

FRONTIER = range(PRIORITY_LIMIT - 1, PRIORITY_LIMIT + 5)  # 2**21 - 2 .. 2**21 + 3
NEAR = [0, 1, 2, 3, 2**31 - 1, 2**31, 2**31 + 1, TIER_SPAN - 2, TIER_SPAN - 1]
FAR = [2**22, 2**31, 2**32, 2**40, 2**52, 2**53 - 1, 2**53, 2**53 + 1, 2**53 + 3, 2**63, 2**64,
       2**100, 2**200 + 1, FINITE_PRIORITY_LIMIT - 1, FINITE_PRIORITY_LIMIT]
WRAP = [TIER_SPAN, TIER_SPAN + 1, 2**53 - 1, 2**53, 2**53 + 1, INCR_LIMIT - 1, INCR_LIMIT]
EDGES = [(p, c) for p in [0, 1, *FRONTIER, *FAR] for c in NEAR + WRAP]


def upto(rng: random.Random, limit: int) -> int:
    """A number in 0..limit, its bit length uniform: every order of magnitude gets cases."""
    return min(rng.getrandbits(rng.randint(0, limit.bit_length())), limit)


def halfway(rng: random.Random, bits: int) -> int:
    """A number of ``bits`` bits (> 53) exactly half-way between two doubles."""
    return (rng.getrandbits(53) | 1 << 52) << (bits - 53) | 1 << (bits - 54)


def tie(rng: random.Random) -> tuple[int, int]:
    """A score half-way between two doubles (so ties to even decides), or a
    priority or counter that is, so its conversion to a double ties."""
    kind = rng.randrange(4)
    if kind == 0:
        return halfway(rng, rng.randint(54, FINITE_PRIORITY_LIMIT.bit_length() - 1)), upto(rng, INCR_LIMIT)
    if kind == 1:
        return upto(rng, PRIORITY_LIMIT * 4), halfway(rng, rng.randint(54, 63))
    p = rng.randrange(2**21, 2 ** rng.randint(22, 53))
    ulp = 2 ** (p.bit_length() - 21)  # the spacing of the doubles near p * 2**32
    low = rng.randrange(TIER_SPAN // ulp) * ulp + ulp // 2
    return p, low + (rng.randrange(2**21) * TIER_SPAN if kind == 3 else 0)  # the counter stays exact


def generate(seed: int = SEED, n: int = N) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    near = lambda: rng.choice(NEAR + [rng.randrange(TIER_SPAN)])  # noqa: E731
    small = lambda: (rng.randrange(1000), rng.randrange(10_000))  # noqa: E731
    frontier = lambda: (rng.choice(FRONTIER), near())  # noqa: E731
    far = lambda: (rng.choice(FAR + [upto(rng, 2**64)]), near())  # noqa: E731
    wrap = lambda: (upto(rng, 2**23), (upto(rng, 2**31 - 2) + 1) * TIER_SPAN + near())  # noqa: E731
    spread = lambda: (upto(rng, FINITE_PRIORITY_LIMIT), upto(rng, INCR_LIMIT))  # noqa: E731
    groups = [small, frontier, frontier, far, wrap, wrap, lambda: tie(rng), lambda: tie(rng), spread]
    cases = list(EDGES)
    while len(cases) < n:
        cases.append(groups[len(cases) % len(groups)]())
    return cases


def exact_score(p: int, c: int) -> int:
    """priority_score, also past PRIORITY_LIMIT (where priority_score refuses)."""
    return priority_score(p, c) if p <= PRIORITY_LIMIT else p * TIER_SPAN + c % TIER_SPAN


def half_way(n: int) -> bool:
    """n lies exactly half-way between two neighbouring doubles."""
    ulp = 2 ** max(n.bit_length() - 53, 0)
    return ulp > 1 and n % ulp == ulp // 2


def expected(p: int, c: int) -> list:
    """Python's answers for one case, in the order page_score_cases.mjs reads them; the digits
    of scores past 2**128 are left out (null): hundreds of digits each, and no new corner."""
    exact, stored = exact_score(p, c), stored_score(p, c)
    pair = lambda two: "%d,%d" % two  # noqa: E731
    digits = [thousands(exact), thousands(stored), format_hex(exact), format(exact, "064b")]
    return [str(p), str(c), str(exact), str(int(stored)), is_exact(p, c),
            pair(split_score(exact) if exact <= MAX_SCORE else split_stored(exact)), pair(split_stored(stored)),
            *(digits if exact < 2**128 else [None] * 4)]


@pytest.fixture(scope="module")
def node() -> str:
    return node_or_skip()


def compare(node: str, module: Path, cases: list[tuple[int, int]], folder: Path) -> dict:
    """Run the cases through ``module`` in one Node process; its report."""
    path = folder / "cases.json"
    path.write_text(json.dumps({"cases": [expected(p, c) for p, c in cases],
                                "powers": [[str(b), str(e), power(b, e)] for b, e in POWERS]}))
    env = {**os.environ, "PAGE_SCORE_MODULE": module.as_uri(), "PAGE_SCORE_CASES": str(path)}
    done = subprocess.run([node, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"node exited {done.returncode}: {done.stderr.strip()}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_every_corner(cases: list[tuple[int, int]]) -> None:
    above = [(p, c) for p, c in cases if PRIORITY_LIMIT < p]
    assert sum(p in FRONTIER for p, _ in cases) > 10_000 and any(p == FINITE_PRIORITY_LIMIT for p, _ in above)
    assert sum(c >= TIER_SPAN for _, c in cases) > 20_000 and any(c == INCR_LIMIT for _, c in cases)
    ties = [int(stored_score(p, c)) - exact_score(p, c) for p, c in above
            if p < 2**53 and c < 2**53 and half_way(exact_score(p, c))]
    assert sum(d > 0 for d in ties) > 1_000 and sum(d < 0 for d in ties) > 1_000  # to even, up and down
    assert sum(half_way(p) for p, _ in cases) > 1_000 and sum(half_way(c) for _, c in cases) > 1_000


@pytest.mark.slow  # 3 to 4 s on two cores: 100,000 cases through Python's checked functions, then Node
def test_score_js_equals_python_on_every_case(node, tmp_path):
    cases = generate()
    assert len(cases) == N
    assert_every_corner(cases)
    report = compare(node, PAGE / "score.js", cases, tmp_path)
    assert report["first"] == [] and report["mismatches"] == 0, json.dumps(report, indent=1)
    assert report["compared"] == N


def test_the_composed_module_runs_the_same(node, tmp_path):
    """The text an anywidget runs (page_module) on the first 1,000 cases: every edge, some of each group."""
    module = tmp_path / "score.mjs"
    module.write_text(page_module("score"), encoding="utf-8")
    report = compare(node, module, generate(n=1_000), tmp_path)
    assert report == {"compared": 1_000, "mismatches": 0, "first": []}
