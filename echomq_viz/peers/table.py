"""The measured properties as text: one library's details, and the closing table (pure)."""

from __future__ import annotations

from typing import Sequence

from echomq_viz.peers.observe import OpSummary
from echomq_viz.peers.runs import LEVELS_TRIED, PeerRun
from echomq_viz.peers.workload import order_difference

__all__ = ["order_verdict", "commands_text", "keys_text", "details", "closing_rows",
           "closing_table", "closing_table_html", "COLUMNS"]

COLUMNS = ("library", "pop order", "FIFO in a tier", "levels kept apart", "keys after 24 adds", "commands per add",
           "commands per pop", "steps per add", "steps per pop")


def order_verdict(run: PeerRun) -> str:
    if run.correct:
        return "correct"
    parts = []
    if run.tier_breaks:
        parts.append(f"{run.tier_breaks} jobs before a better tier")
    if run.fifo_breaks:
        parts.append(f"{run.fifo_breaks} jobs before an earlier one of their tier")
    return "wrong: " + ", ".join(parts)


def _number(value: float) -> str:
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"


def commands_text(summary: OpSummary) -> str:
    text = _number(summary.client_commands)
    if summary.script_commands:
        text += f" + {_number(summary.script_commands)} in Lua"
    return text


def atomic_text(summary: OpSummary) -> str:
    """How many steps Redis applied apart (writing commands, transactions, scripts; a read is
    none), with what the one step was when there is one."""
    return f"1 ({summary.how})" if summary.atomic else str(summary.steps)


def levels_text(run: PeerRun) -> str:
    return f"{run.levels_kept} of {LEVELS_TRIED} tried"


def keys_text(run: PeerRun) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in run.type_counts().items())


def details(run: PeerRun) -> str:
    """Everything measured about one library, as lines of text."""
    layout = "\n".join(f"  {shape.encode('unicode_escape').decode('ascii'):<34} {kind:<7} x{count}"
                       for (shape, kind), count in run.key_layout().items())
    return "\n".join([
        f"{run.label} · {run.library}",
        f"configured: {run.configured}",
        f"a tier is passed as: {run.tier_means}",
        f"levels: {levels_text(run)} (one job per level, worst first); by design: {run.levels}",
        f"pop order: {order_verdict(run)}" + ("" if run.correct else
                                               f"\n  against the top strip: {order_difference(run.order, run.right)}"),
        f"keys after every add (emq:{{viz-10-{run.key}@…}}:<key>):",
        layout,
        f"commands per add: {commands_text(run.add)}  ({', '.join(run.add.names)}); steps: {atomic_text(run.add)}",
        f"commands per pop: {commands_text(run.pop)}  ({', '.join(run.pop.names)}); steps: {atomic_text(run.pop)}",
    ])


def closing_rows(runs: Sequence[PeerRun]) -> list[tuple[str, ...]]:
    return [(run.label, order_verdict(run), "yes" if run.fifo_breaks == 0 else f"no ({run.fifo_breaks} breaks)",
             levels_text(run), keys_text(run), commands_text(run.add), commands_text(run.pop), atomic_text(run.add),
             atomic_text(run.pop)) for run in runs]


def closing_table(runs: Sequence[PeerRun]) -> str:
    """Libraries as rows, the measured properties as columns; one column block per line pair."""
    rows = closing_rows(runs)
    width = max(len(row[0]) for row in rows)
    lines = []
    for index, column in enumerate(COLUMNS[1:], start=1):
        lines.append(f"{column}:")
        lines.extend(f"  {row[0]:<{width}}  {row[index]}" for row in rows)
    return "\n".join(lines)


def closing_table_html(runs: Sequence[PeerRun]) -> str:
    """The closing table as an HTML table (libraries as rows)."""
    import html

    head = "".join(f"<th style='text-align:left'>{html.escape(column)}</th>" for column in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(cell)}</td>" for cell in row)
                   + "</tr>" for row in closing_rows(runs))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
