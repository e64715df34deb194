"""What notebook 10 prints about the worker runs, made from the runs (pure).

Every sentence about a library is made here from what its worker did on its
own Redis (:mod:`.deployed`), never typed: the versions and settings (once),
each run's order as a difference from the right one (printed once, at the
top of the table), each worker's add and take as steps, the probes' orders.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from echomq_viz.peers.cluster_probes import keys_named, names_one, slot_rows
from echomq_viz.peers.deployments import CELERY_DOCS
from echomq_viz.peers.workers import BLOCKING, WorkerRun, before_each_record
from echomq_viz.peers.workload import order_difference

__all__ = ["SHORT", "short_label", "versions_table", "celery_settings_text", "order_difference", "orders_table",
           "steps_of", "step_text", "take_summary", "first_take", "take_text", "sent_and_ran", "prefetch_rows",
           "burst_takes", "burst_text", "ordinal", "left_behind", "commands_text",
           "probe_report", "fifo_line", "slot_table", "priority_text", "walk_text", "takes_text"]

# The workload's runs, by the names the tables give them
SHORT = {"celery": "Celery, defaults", "celery10": "Celery, ten steps", "rq": "RQ", "huey": "huey",
         "bull": "Bull (npm)", "bullmq-node": "BullMQ (npm)", "bullmq-py": "BullMQ (PyPI)",
         "rq-burst": "RQ, --burst", "rq-round_robin": "RQ, round_robin", "rq-random": "RQ, random"}
RANDOM = {"rq-random"}  # its order is drawn anew on every run: only whether it is the right one is told


def short_label(run: WorkerRun) -> str:
    return SHORT.get(run.key if run.key in SHORT else "", run.label)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def versions_table(runs: Mapping[str, WorkerRun], keys: Sequence[str]) -> str:
    """One line a library: its name, the version installed, how its worker was started."""
    rows = [(SHORT[key], runs[key].version, runs[key].how) for key in keys if key in runs]
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{'library':<{width[0]}}  {'version':<{width[1]}}  worker, as started"]
    lines += [f"{name:<{width[0]}}  {version:<{width[1]}}  {how}" for name, version, how in rows]
    return "\n".join(lines)


def celery_settings_text(runs: Mapping[str, WorkerRun]) -> str:
    """Every Celery setting any run set, each once, with where Celery documents it."""
    values: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    for run in runs.values():
        for name, value, source in run.settings:
            if repr(value) not in values.setdefault(name, []):
                values[name].append(repr(value))
            sources[name] = source
    every = [name for name in values if all(name in {s[0] for s in run.settings} for run in runs.values())]

    def said(names):
        return ", ".join(f"{name} = {' or '.join(values[name])}" for name in names)

    documented = [name for name in values if name not in every and sources[name].startswith(CELERY_DOCS)]
    lines = [f"Celery is set by its settings alone (docs: {CELERY_DOCS.split('#')[0]}):",
             f"  every run: {said(every)}", f"  the runs named after them: {said(documented)}"]
    lines += [f"  the ten-step runs: {said([name])}\n    ({sources[name]})" for name in values
              if name not in every and name not in documented]
    return "\n".join(lines)


def orders_table(runs: Mapping[str, WorkerRun], keys: Sequence[str], right: Sequence[str], *,
                 with_right: bool = True) -> str:
    """The right order (unless ``with_right`` is false: printed already), then each run's
    jobs as a difference from it."""
    names = [SHORT[key] for key in keys if key in runs]
    width = max(len("right order"), *map(len, names))
    lines = [f"{'right order':<{width}}  {' '.join(right)}"] if with_right else []
    for key in keys:
        if key not in runs:
            continue
        order = list(runs[key].order[:len(right)])
        if order == list(right):
            text = "the right order"
        elif key in RANDOM:
            text = "not the right order (the queues are shuffled before each pop)"
        else:
            wrong = sum(i >= len(order) or order[i] != name for i, name in enumerate(right))
            text = f"{order_difference(order, right)}   {wrong} of {len(right)} placed otherwise"
        lines.append(f"{SHORT[key]:<{width}}  {text}")
    return "\n".join(lines)


# -- how a worker adds and takes: steps ---------------------------------------------------------------


def steps_of(lines: Sequence[tuple[str, bool]]) -> list[list[tuple[str, bool]]]:
    """MONITOR lines grouped into what Redis applied at once: one command, one
    ``MULTI``/``EXEC`` block, or one script call with the lines its Lua ran. Pure."""
    steps: list[list[tuple[str, bool]]] = []
    in_multi = False
    for text, lua in lines:
        verb = text.split(" ", 1)[0].upper()
        if lua and steps:
            steps[-1].append((text, lua))
        elif in_multi:
            steps[-1].append((text, lua))
            in_multi = verb not in ("EXEC", "DISCARD")
        else:
            steps.append([(text, lua)])
            in_multi = verb == "MULTI"
    return steps


def step_text(step: Sequence[tuple[str, bool]], known: Mapping[str, str]) -> str:
    """One step in a few words: a command and the keys it names (a blocking pop's timeout
    too), a transaction's commands, a script's key count and the commands its Lua ran."""
    def command(text: str) -> str:
        words = text.split(" ")
        verb = words[0].upper()
        keys = keys_named(words, dict(known))
        tail = [words[-1]] if verb in BLOCKING and len(words) > 1 else []
        return " ".join([verb, *(_escaped_key(key) for key in keys), *tail])

    head, verb = step[0][0], step[0][0].split(" ", 1)[0].upper()
    if verb == "MULTI":
        body = [text for text, _ in step[1:] if text.split(" ", 1)[0].upper() not in ("EXEC", "DISCARD")]
        return "MULTI " + ", ".join(command(text) for text in body) + " EXEC"
    if verb in ("EVAL", "EVALSHA"):
        words = head.split(" ")
        count = words[2] if len(words) > 2 and words[2].isdigit() else "?"
        inner = [text.split(" ", 1)[0].upper() for text, lua in step[1:] if lua]
        return f"{verb} ({count} keys; in Lua: {' '.join(inner)})"
    return command(head)


def _escaped_key(key: str) -> str:
    """``key`` as printed: a byte outside printable ASCII as ``\\xNN``, one job's or worker's id as ``<id>``."""
    if names_one(key):
        parts = re.split(r"([:.])", key)
        key = "".join("<id>" if part not in ":." and names_one(":".join(["x", "x", part])) else part for part in parts)
    return "".join(c if c.isprintable() and ord(c) < 127 else f"\\x{ord(c):02x}" for c in key)


def first_take(lines: Sequence[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """The take in ``lines``: the blocking command, then the next step (one command, a
    ``MULTI``/``EXEC`` block, or a script call with its Lua lines). Pure."""
    lines = list(lines)
    start = next((i for i, (text, lua) in enumerate(lines) if not lua
                  and text.split(" ", 1)[0].upper() in BLOCKING), 0)
    steps = steps_of(lines[start:])
    return [line for step in steps[:2] for line in step]


def take_summary(run: WorkerRun) -> str:
    """One worker: its add and its take after an empty queue, each as its steps."""
    known = {_escaped_key(key): key for key in run.keys}
    add = " · ".join(step_text(step, known) for step in steps_of(run.add))
    take = " · then ".join(step_text(step, known) for step in steps_of(first_take(run.late)))
    return f"{short_label(run)}\n  add:  {add}\n  take: {take}"


# MONITOR lines, shortened: what differs on every run written <token>, <id>, <sha>, <time>
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX = re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{16,}\b")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT[0-9:.+Z-]+|\b1[6-9]\d{8}(\d{3})?(\.\d+)?\b|\b\d{15,}\b")
_LOCK_TOKEN = re.compile(r"^(SET \S+:lock )\S+", re.IGNORECASE)


def _short(text: str, width: int = 64) -> str:
    text = _LOCK_TOKEN.sub(r"\1<token>", text)
    text = _UUID.sub("<id>", text)
    text = _HEX.sub("<sha>", text)
    text = _TIME.sub("<time>", text)
    if "\\x" in text:
        text = text[:text.index("\\x")] + "<bytes>"
    return text if len(text) <= width else text[:width - 1] + "…"


def take_text(lines: Sequence[tuple[str, bool]]) -> str:
    """MONITOR lines as printed: one a line, Lua's indented, what differs on every run written
    ``<token>``, ``<id>``, ``<sha>``, ``<time>``."""
    return "\n".join(("      in Lua: " if lua else "  ") + _short(text) for text, lua in lines)


# -- the probes ---------------------------------------------------------------------------------------


def priority_text(priority: object) -> str:
    """A priority as the notebook writes it: a power of two or one off it as such (``−2³¹``, ``2²¹−1``)."""
    if isinstance(priority, int) and not isinstance(priority, bool) and abs(priority) >= 2**20 - 1:
        for power in range(20, 64):
            rest = abs(priority) - 2**power
            if rest in (-1, 0, 1):
                tail = {0: "", 1: "+1", -1: "−1"}[rest if priority > 0 else -rest]
                return f"{'−' if priority < 0 else ''}2{str(power).translate(_SUPERSCRIPT)}{tail}"
    return str(priority).replace("-", "−")


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sent(name: str, priority: object) -> str:
    return name if priority is None or name == priority_text(priority) else f"{name}={priority_text(priority)}"


def sent_and_ran(run: WorkerRun) -> str:
    """What the producer sent (in order; a refusal said), then the order the worker ran them in."""
    sent = " ".join(_sent(s.name, s.priority) + ("" if s.outcome == "ok" else f" (refused: {s.outcome})")
                    for s in run.sent)
    never = [s.name for s in run.sent if s.outcome == "ok" and s.name not in run.order]
    tail = f"; never ran: {' '.join(never)}" if never else ""
    return f"  sent {sent}\n  ran  {' '.join(run.order)}{tail}"


def prefetch_rows(runs: Mapping[str, WorkerRun], keys: Sequence[str]) -> str:
    """For each prefetch run: what the worker held (unacknowledged) while the first task ran,
    and where the urgent task, sent then, ran."""
    lines = []
    width = max(len(runs[key].label.removeprefix("Celery, ")) for key in keys)
    for key in keys:
        run = runs[key]
        running, held = run.notes["running"], run.notes["unacked"]
        others = [name for name in held if name != running]
        text = (" ".join(others) if others else "nothing") + (f" (and {running} itself)" if running in held else "")
        lines.append(f"  {run.label.removeprefix('Celery, '):<{width}}  held {text:<26} urgent ran "
                     f"{ordinal(run.ran('urgent'))} of {len(run.order)}")
    return "\n".join(lines)


def burst_takes(run: WorkerRun) -> list[tuple[str, tuple[str, ...]]]:
    """For each job the worker ran, in order: its name, and the pop commands the worker sent
    since the job before it finished (each a MONITOR line), then the command after the last pop."""
    pops_of = {"LPOP", "RPOP", "ZPOPMIN", "LMOVE", "RPOPLPUSH"} | BLOCKING
    takes = []
    for name, part in zip(run.order, before_each_record(run.worker)):
        texts = [text for text, lua in part if not lua]
        pops = [i for i, text in enumerate(texts) if text.split(" ", 1)[0].upper() in pops_of]
        takes.append((name, tuple(texts[pops[0]:pops[-1] + 2]) if pops else ()))
    return takes


def burst_text(run: WorkerRun, tiers: Mapping[str, int]) -> str:
    """How many ``LPOP`` RQ's burst worker sent before each job, by the job's tier."""
    counts: dict[int, set[int]] = {}
    for name, take in burst_takes(run):
        counts.setdefault(tiers[name], set()).add(sum(text.split(" ", 1)[0].upper() == "LPOP" for text in take))
    return "LPOPs sent for each job, by its tier: " + ", ".join(
        f"tier {t}: {' or '.join(map(str, sorted(n)))}" for t, n in sorted(counts.items()))


def left_behind(run: WorkerRun) -> str:
    """Where each job that never ran was when the run ended, and what its worker reported."""
    lines = []
    for name, found in run.notes.items():
        if name == "worker errors":
            lines.append(f"  the worker reported: {'; '.join(found)}")
        elif isinstance(found, dict):  # RQ: the job's own status, and what holds its id
            holders = ", ".join(found["held by"]) or "no list, set or sorted set"
            lines.append(f"  {name}: its hash says status {found['status']!r}; its id is in {holders}")
        else:
            lines.append(f"  {name}: its id is in {', '.join(found) or 'no list, set or sorted set'}")
    return "\n".join(lines)


def commands_text(commands: Sequence[str]) -> str:
    """Commands a client sent (MONITOR lines, no Lua), as steps in a few words."""
    return " · ".join(step_text(step, {}) for step in steps_of([(text, False) for text in commands]))


def probe_report(runs: Mapping[str, WorkerRun], keys: Sequence[str]) -> str:
    """Each probe run: its library (the versions table says which version), what was sent and what
    ran, what was left behind."""
    lines = []
    for key in keys:
        if key in runs:
            run = runs[key]
            lines += [run.label, sent_and_ran(run)] + ([left_behind(run)] if run.notes else [])
    return "\n".join(lines)


def fifo_line(run: WorkerRun) -> str:
    """Twelve jobs of one priority: which, and the order they ran in."""
    return (f"{run.label}: twelve jobs of priority {priority_text(run.sent[0].priority)}, added "
            f"{run.sent[0].name}..{run.sent[-1].name}, ran {' '.join(run.order)}")


def slot_table(runs: Sequence[WorkerRun]) -> str:
    """One line a library: the keys its commands named, their hash slots, what names keys of two."""
    rows = [(short_label(run), *row[1:]) for run, row in zip(runs, slot_rows(runs))]
    width = max(len("library"), *(len(row[0]) for row in rows))
    lines = [f"{'library':<{width}}  {'keys named':>10} {'slots':>5}  naming keys of two slots in one step"]
    lines += [f"{label:<{width}}  {keys:>10} {slots:>5}  {across}" for label, keys, slots, across in rows]
    return "\n".join(lines)


def walk_text(walk: Mapping[str, object]) -> str:
    """The stored list walk: each command's median µs at the head, the middle and the tail."""
    return "\n".join(f"{command.upper():<8} " + ", ".join(f"{us:,.0f} µs at the {place}"
                                                        for place, us in walk[f"{command}_us"].items())
                     for command in ("lindex", "linsert"))


def takes_text(runs: Mapping[str, WorkerRun], keys: Sequence[str]) -> str:
    """:func:`take_summary` of each run, one whose steps equal an earlier run's said in one line."""
    seen: dict[str, str] = {}
    lines = []
    for key in keys:
        if key not in runs:
            continue
        head, _, steps = take_summary(runs[key]).partition("\n")
        lines.append(f"{head}: the same steps as {seen[steps]}" if steps in seen else f"{head}\n{steps}")
        seen.setdefault(steps, head)
    return "\n".join(lines)
