"""How every benchmark prints its figures: one line a key, each with its goal met or missed."""

from __future__ import annotations

import json
from pathlib import Path


def goal_note(goals: dict, key: str, value) -> str:
    """``  goal <= 100: met`` (or ``MISSED``) for a measured number, ``  not
    measured here`` for a goal without one, nothing for a key without a goal."""
    goal = goals.get(key)
    if goal is None:
        return ""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "  not measured here"
    op, target = goal
    met = value <= target if op == "<=" else value >= target
    return f"  goal {op} {target:g}: {'met' if met else 'MISSED'}"


def print_results(results: dict, goals: dict, json_out: str | None = None) -> None:
    """Each figure on a line of its own (``classroom_steps`` has a table of
    its own); with ``json_out``, the figures written there too."""
    width = max(len(key) for key in results)
    for key, value in results.items():
        if key not in ("classroom_steps", "keys_by_part"):
            print(f"{key:<{width}}  {value}{goal_note(goals, key, value)}")
    if json_out:
        Path(json_out).write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {json_out}")
