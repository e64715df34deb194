"""Designs that fail: deliberately wrong variants of the real scripts, run on
Redis beside the real ones, with the same jobs.

Each design in ``lua/designs/`` swaps ONE piece of a real script (the score
include of ``addPrioritizedJob-9``, or the pop line of ``moveToActive-11``);
the rest is the real script, byte for byte. A run adds the same jobs to two
demo queues, one through the real scripts and one through the design,
consumes both with a real consume script and compares the pop orders.
Clocks are arguments (simulated, skewed at will), never the wall clock, so
every run is reproducible.

The exercise packs three keys (tenant, priority, arrival) into one score
within a budget of bits, checked live by ``lua/designs/packThreeKeys.lua``.
The real script loader never sees ``lua/designs/``: it reads ``lua/*.lua`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from echomq_viz.core.checks import check_bool, check_int, check_str
from echomq_viz.core.keys import Keys
from echomq_viz.experiments.live import Demo
from echomq_viz.core.score import EXACT_LIMIT, TIER_SPAN, split_stored
from echomq_viz.redis_side import variants
from echomq_viz.redis_side.functions import ScriptCall
from echomq_viz.core.notation import power, power_minus
from echomq_viz.redis_side.scripts import validate_priority

__all__ = [
    "DESIGN_DIR", "Design", "DESIGNS", "Arrival", "Scenario", "SCENARIOS", "Outcome", "DesignRunner",
    "design_source", "EXACT_BITS", "BUDGET_CEILING", "Budget", "check_budget", "EXERCISE_JOBS", "EXERCISE_ANSWER",
    "EXERCISE_RANGES", "TENANTS_4000_RANGES", "TENANTS_4000_ANSWER",
    "PackOutcome", "run_packing", "WRAP_DAYS",
]

DESIGN_DIR = variants.DESIGN_DIR
EXACT_BITS = 53  # a double keeps every whole number exact up to 2**53
BUDGET_CEILING = 64  # bits of one double: no budget may ask for more, not even for teaching
WRAP_DAYS = TIER_SPAN / 86_400_000  # 2**32 ms in days: about 49.7
_P32 = power(2, 32)  # "2³²", as the scenarios' text writes it
_LOCK_MS = 60_000


@dataclass(frozen=True)
class Design:
    """One wrong variant: the file in ``lua/designs/`` and the real command it changes."""

    key: str
    title: str
    file: str
    script: str  # "addPrioritizedJob" (its score include replaced) or "moveToActive" (its pop line)

    @property
    def path(self):
        return DESIGN_DIR / self.file

    @property
    def replaces(self) -> str:
        """The exact text of the real assembled script this design replaces."""
        return variants.replaced_text(self.script)


DESIGNS = (
    Design("fifo", "the counter in the high bits, the priority in the low bits",
           "arrivalInHighBits.lua", "addPrioritizedJob"),
    Design("popmax", "ZPOPMAX instead of ZPOPMIN", "popLargestFirst.lua", "moveToActive"),
    Design("clock", "a millisecond timestamp instead of INCR", "millisecondClock.lua", "addPrioritizedJob"),
    Design("nomod", "no % 0x100000000 on the counter", "counterWithoutModulo.lua", "addPrioritizedJob"),
)
_BY_KEY = {design.key: design for design in DESIGNS}


def design_source(design: Design, real_source: str) -> str:
    """The real assembled script with the design's piece swapped in.

    :raises RuntimeError: when the real script no longer holds the replaced
        text exactly once (the design would then test nothing).
    """
    if not isinstance(design, Design):
        raise TypeError(f"design must be a Design, got {type(design).__name__}")
    return variants.design_source(design.file, design.script, real_source)


@dataclass(frozen=True)
class Arrival:
    """One job as it arrives: its name, priority, the adding client's clock
    (ms since the epoch, simulated) and, optionally, the value ``pc`` is set
    to just before (the history of a queue that has been busy for long)."""

    name: str
    priority: int
    clock: int
    pc: int | None = None

    def __post_init__(self) -> None:
        check_str("job name", self.name)
        validate_priority(self.priority)
        check_int("clock", self.clock, 0, EXACT_LIMIT - 1)
        if self.pc is not None:
            check_int("pc", self.pc, 0, EXACT_LIMIT - 2)


@dataclass(frozen=True)
class Scenario:
    """A job list for one design, and why the design gets it wrong, in one sentence."""

    key: str
    design: Design
    title: str
    jobs: tuple[Arrival, ...]
    reason: str


_T0 = 1_717_000_000_000  # a clock reading in June 2024, far from a 2**32 ms wrap
_WRAP = 400 * TIER_SPAN  # 2024-06-10 02:35:18.400 UTC: a millisecond clock's low 32 bits wrap here
_MIXED = tuple(Arrival(f"arrival-{n}", p, _T0 + n) for n, p in enumerate((3, 1, 2, 1, 3, 2), start=1))

SCENARIOS = (
    Scenario("fifo", _BY_KEY["fifo"], "six jobs in three tiers", _MIXED,
             "The counter sits in the high bits, so arrival decides first and the priority only "
             "breaks ties that never happen: plain first in, first out."),
    Scenario("popmax", _BY_KEY["popmax"], "six jobs in three tiers", _MIXED,
             "ZPOPMAX takes the largest score: the worst tier (the largest priority number) first, "
             "and inside a tier the newest job first."),
    Scenario("clock-tie", _BY_KEY["clock"], "ten jobs, the last two in the same millisecond",
             tuple(Arrival(f"arrival-{n}", 1, _T0 + min(n, 9)) for n in range(1, 11)),
             "Jobs 9 and 10 carry the same millisecond, so they share a score and Redis orders "
             "them by the bytes of their ids: \"10\" sorts before \"9\"."),
    Scenario("clock-skew", _BY_KEY["clock"], "two clients, B's clock 40 ms behind",
             tuple(Arrival(f"client-{c}-{n}", 2, _T0 + 10 * n - (40 if c == "B" else 0))
                   for n, c in enumerate("ABAB", start=1)),
             "Client B's clock runs 40 ms behind, so its jobs carry earlier times than jobs that "
             "arrived before them, and jump ahead."),
    Scenario("clock-wrap", _BY_KEY["clock"], f"four jobs across a {_P32} ms boundary",
             tuple(Arrival(f"arrival-{n}", 1, _WRAP - 3 + n) for n in range(1, 5)),
             f"{_P32} ms is {WRAP_DAYS:.1f} days: the low 32 bits of the clock wrap to 0 there, and "
             "the jobs after the wrap get the smallest scores and jump ahead."),
    Scenario("nomod", _BY_KEY["nomod"], f"a busy queue: pc passes {_P32} between two adds",
             (Arrival("old-tier-2", 2, _T0 + 1), Arrival("recent-tier-2", 2, _T0 + 2, pc=TIER_SPAN - 2),
              Arrival("urgent-tier-1", 1, _T0 + 3, pc=TIER_SPAN + 4), Arrival("new-tier-2", 2, _T0 + 4)),
             f"Without % {_P32} the counter {_P32} + 5 carries into the tier bits: the priority-1 job is "
             "filed as tier 2 and waits behind an older tier-2 job; the real script keeps every job in "
             f"its tier, and pays for the wrap inside one: new-tier-2 (counter {_P32} + 6, kept as 6) "
             f"overtakes recent-tier-2 (counter {power_minus(2, 32, 1)})."),
)


@dataclass(frozen=True)
class Outcome:
    """One scenario run twice: through the real scripts and through the design."""

    scenario: Scenario
    added: tuple[str, ...]  # job ids in arrival order, the same in both queues
    right_order: tuple[str, ...]  # the real consume's pop order from the real queue
    design_order: tuple[str, ...]  # the pop order from the design's queue
    right_scores: dict
    design_scores: dict

    @property
    def agrees(self) -> bool:
        return self.right_order == self.design_order

    def text(self) -> str:
        """The jobs, both stored scores, both pop orders and the reason."""
        scenario, design = self.scenario, self.scenario.design
        clocks = design.key == "clock"
        head = (f"{'job':>3}  {'name':<14} {'prio':>4}  " + (f"{'clock (ms)':>17}  " if clocks else "")
                + f"{'right score':>15}  {'design score':>15}  design score read as (tier, low 32 bits)")
        rows = [f"{scenario.title} · design: {design.title} (lua/designs/{design.file})", head]
        for job_id, job in zip(self.added, scenario.jobs):
            wrong = self.design_scores[job_id]
            rows.append(f"{job_id:>3}  {job.name:<14} {job.priority:>4}  "
                        + (f"{job.clock:>17,}  " if clocks else "")
                        + f"{int(self.right_scores[job_id]):>15,}  {int(wrong):>15,}  {split_stored(wrong)}")
        rows.append(f"real scripts pop: {' '.join(self.right_order)}")
        rows.append(f"this design pops: {' '.join(self.design_order)}"
                    + ("" if self.agrees else "  <- differs"))
        rows.append(f"why: {scenario.reason}")
        return "\n".join(rows)


class DesignRunner:
    """Runs scenarios: the real scripts on the demo queue ``viz-09-right``,
    each design on a demo queue of its own (``viz-09-<design key>``).

    :param client: a redis-py client; :func:`echomq_viz.redis_side.server.connect` by default.
    """

    def __init__(self, client=None) -> None:
        self.right = Demo("viz-09-right", client)
        self.client = self.right.client
        self.demos = {design.key: Demo(f"viz-09-{design.key}", self.client) for design in DESIGNS}
        self._registered: dict[str, object] = {}

    def source(self, design: Design) -> str:
        """The design's full script, as Redis runs it."""
        return design_source(design, self.right.scripts.sources[design.script].source)

    def _script(self, design: Design):
        if design.key not in self._registered:
            self._registered[design.key] = ScriptCall(self.client, self.source(design))  # in a shared library
        return self._registered[design.key]

    def reset(self) -> None:
        """Empty every demo queue of this runner."""
        for demo in (self.right, *self.demos.values()):
            demo.reset()

    def run(self, scenario: Scenario) -> Outcome:
        """Empty both queues, add the scenario's jobs to each (the real add,
        and the design's add when it changes the add), consume both (the real
        consume, and the design's when it changes the consume)."""
        if not isinstance(scenario, Scenario):
            raise TypeError(f"scenario must be one of SCENARIOS, got {type(scenario).__name__}")
        design = scenario.design
        wrong = self.demos[design.key]
        added = self._fill(self.right, scenario.jobs, None)
        right_scores = {e.job_id: e.score for e in self.right.entries()}
        right_order = tuple(job.id for job in self.right.drain())
        changes_add = design.script == "addPrioritizedJob"
        wrong_added = self._fill(wrong, scenario.jobs, design if changes_add else None)
        if wrong_added != added:
            raise RuntimeError(f"the two queues gave different job ids: {added} and {wrong_added}")
        design_scores = {e.job_id: e.score for e in wrong.entries()}
        if design.script == "moveToActive":
            design_order = self._drain_with(wrong, design, len(added), scenario.jobs[-1].clock)
        else:
            design_order = tuple(job.id for job in wrong.drain())
        return Outcome(scenario, added, right_order, design_order, right_scores, design_scores)

    def _fill(self, demo: Demo, jobs: Sequence[Arrival], design: Design | None) -> tuple[str, ...]:
        demo.reset()
        ids = []
        for job in jobs:
            if job.pc is not None:
                demo.set_counter(job.pc)
            if design is None:
                ids.append(demo.scripts.add_prioritized_job(demo.ctx, job.name, {}, job.priority,
                                                            timestamp=job.clock))
            else:
                keys = demo.scripts.sources["addPrioritizedJob"].keys(demo.ctx)
                ids.append(self._script(design)(
                    keys=keys, args=[Keys.base(demo.ctx), "", job.name, job.clock, "{}", job.priority]))
        return tuple(ids)

    def _drain_with(self, demo: Demo, design: Design, count: int, clock: int) -> tuple[str, ...]:
        keys = demo.scripts.sources["moveToActive"].keys(demo.ctx)
        order = []
        for _ in range(count + 1):  # one more call must find nothing
            reply = self._script(design)(keys=keys, args=[Keys.base(demo.ctx), clock, "viz-worker", _LOCK_MS])
            if not reply:
                return tuple(order)
            order.append(reply[0])
        raise RuntimeError(f"{design.file} handed out more than the {count} jobs added")


# -- the exercise: three keys in one score -------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """How many bits each key of a (tenant, priority, arrival) score gets.

    The tenant takes the highest bits, the arrival the lowest; each field
    gets 0..53 bits. A budget past 53 bits in all can be built (to watch it
    fail) but :func:`check_budget` refuses it.
    """

    tenant_bits: int
    priority_bits: int
    arrival_bits: int

    def __post_init__(self) -> None:
        for what in ("tenant_bits", "priority_bits", "arrival_bits"):
            check_int(what, getattr(self, what), 0, EXACT_BITS)
        if self.total > BUDGET_CEILING:
            raise ValueError(f"the budget must be at most {BUDGET_CEILING} bits even for teaching, got {self.total}")

    @property
    def total(self) -> int:
        return self.tenant_bits + self.priority_bits + self.arrival_bits

    @property
    def exact(self) -> bool:
        return self.total <= EXACT_BITS

    def __str__(self) -> str:
        return (f"tenant {self.tenant_bits} + priority {self.priority_bits} + arrival "
                f"{self.arrival_bits} = {self.total} bits")

    def _keys(self, tenant: object, priority: object, arrival: object) -> tuple[int, int, int]:
        return tuple(check_int(f"{what} ({bits} bits)", value, 0, 2**bits - 1) for what, value, bits in (
            ("tenant", tenant, self.tenant_bits), ("priority", priority, self.priority_bits),
            ("arrival", arrival, self.arrival_bits)))

    def pack(self, tenant: int, priority: int, arrival: int) -> int:
        """The exact packed score, as an int."""
        t, p, a = self._keys(tenant, priority, arrival)
        return (t << (self.priority_bits + self.arrival_bits)) | (p << self.arrival_bits) | a

    def stored(self, tenant: int, priority: int, arrival: int) -> float:
        """The double the Lua computes, step by step as it does: rounded past 2**53."""
        t, p, a = self._keys(tenant, priority, arrival)
        high = float(t) * 2.0 ** (self.priority_bits + self.arrival_bits)
        return high + float(p) * 2.0 ** self.arrival_bits + float(a)

    def unpack(self, score: int | float) -> tuple[int, int, int]:
        """``(tenant, priority, arrival)`` as a score's bits read back; a
        rounded score reads back as other keys."""
        if isinstance(score, float) and score.is_integer():
            score = int(score)
        s = check_int("score", score, 0)
        low = self.priority_bits + self.arrival_bits
        return s >> low, (s >> self.arrival_bits) % 2**self.priority_bits, s % 2**self.arrival_bits


def check_budget(tenant_bits: int, priority_bits: int, arrival_bits: int) -> Budget:
    """A :class:`Budget` after checking it fits a double's 53 exact bits."""
    budget = Budget(tenant_bits, priority_bits, arrival_bits)
    if not budget.exact:
        raise ValueError(f"the budget must be at most {EXACT_BITS} bits (a double keeps whole numbers "
                         f"exact up to {power(2, 53)}), got {budget}")
    return budget


# Tenants 0..1999, priorities 1..1000, a 32-bit arrival counter: (member, tenant, priority, arrival).
EXERCISE_JOBS = (
    ("95", 1999, 5, 95), ("96", 7, 2, 96), ("97", 1999, 3, 97), ("98", 1999, 5, 98),
    ("99", 1999, 5, 99), ("100", 1999, 5, 100), ("101", 1999, 5, 101), ("102", 7, 1, 102),
)
EXERCISE_ANSWER = Budget(11, 10, 32)  # 2048 tenants, 1024 priorities, 2**32 arrivals: 53 bits
# What the exercise states each key may reach (a budget is judged by these, not by the eight
# jobs alone, whose largest priority is 5): tenants 0..1999, priorities up to 1000, 32-bit arrivals
EXERCISE_RANGES = (1999, 1000, 2**32 - 1)
# The follow-up: 4,000 tenants need a 12th tenant bit, which only the arrival can give up
TENANTS_4000_RANGES = (3999, 1000, 2**31 - 1)
TENANTS_4000_ANSWER = Budget(12, 10, 31)


@dataclass(frozen=True)
class PackOutcome:
    """The exercise run once on Redis."""

    budget: Budget
    jobs: tuple[tuple[str, int, int, int], ...]
    popped: tuple[tuple[str, float], ...]  # (member, stored score) in pop order

    @property
    def right_order(self) -> tuple[str, ...]:
        return tuple(m for m, *_ in sorted(self.jobs, key=lambda job: (job[1], job[2], job[3])))

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(member for member, _ in self.popped)

    @property
    def rounded(self) -> tuple[str, ...]:
        """The members whose stored score differs from the exact packed one."""
        stored = dict(self.popped)
        return tuple(m for m, *keys in self.jobs if stored[m] != self.budget.pack(*keys))

    def text(self) -> str:
        stored = dict(self.popped)
        rows = [f"budget: {self.budget}",
                f"{'member':>6}  {'tenant':>6}  {'prio':>4}  {'arrival':>7}  {'exact score':>22}  "
                f"{'Redis stored':>22}  read back as (tenant, priority, arrival)"]
        for member, *keys in self.jobs:
            s = stored[member]
            rows.append(f"{member:>6}  {keys[0]:>6}  {keys[1]:>4}  {keys[2]:>7}  "
                        f"{self.budget.pack(*keys):>22,}  {int(s):>22,}  {self.budget.unpack(s)}")
        rows.append(f"sorted by (tenant, priority, arrival): {' '.join(self.right_order)}")
        rows.append(f"ZPOPMIN order on Redis:                {' '.join(self.order)}")
        if self.order == self.right_order and not self.rounded:
            rows.append(f"every score exact, pop order right: the budget fits in {EXACT_BITS} bits")
        else:
            rows.append(f"{len(self.rounded)} scores rounded ({', '.join(self.rounded)}): equal scores "
                        "pop by member bytes" + ("" if self.order == self.right_order else ", ORDER BROKEN"))
        return "\n".join(rows)


def _checked_jobs(budget: Budget, jobs: object) -> tuple[tuple[str, int, int, int], ...]:
    if not isinstance(jobs, (list, tuple)):
        raise TypeError(f"jobs must be a list of (member, tenant, priority, arrival) tuples, "
                        f"got {type(jobs).__name__}")
    if not 1 <= len(jobs) <= 1000:
        raise ValueError(f"jobs must hold 1..1000 jobs, got {len(jobs)}")
    checked, seen = [], set()
    for job in jobs:
        if not isinstance(job, (tuple, list)) or len(job) != 4:
            raise TypeError(f"each job is a (member, tenant, priority, arrival) tuple, got {job!r}")
        member = check_str("member", job[0])
        if member in seen:
            raise ValueError(f"member {member!r} given twice")
        seen.add(member)
        checked.append((member, *budget._keys(*job[1:])))
    return tuple(checked)


def run_packing(demo: Demo, budget: Budget, jobs=EXERCISE_JOBS, *,
                past_53_for_teaching: bool = False) -> PackOutcome:
    """Empty the demo queue, then run ``packThreeKeys.lua``: it packs every
    job's three keys into a score in Lua, ZADDs them and ZPOPMINs them all.

    A budget past 53 bits is refused unless ``past_53_for_teaching``, which
    runs it anyway to show the rounding. Everything is checked before the reset.
    """
    if not isinstance(demo, Demo):
        raise TypeError(f"demo must be a Demo, e.g. Demo('viz-09-pack'), got {type(demo).__name__}")
    if not isinstance(budget, Budget):
        raise TypeError(f"budget must be a Budget, e.g. Budget(11, 10, 32), got {type(budget).__name__}")
    if not check_bool("past_53_for_teaching", past_53_for_teaching):
        check_budget(budget.tenant_bits, budget.priority_bits, budget.arrival_bits)
    checked = _checked_jobs(budget, jobs)
    demo.reset()
    script = ScriptCall(demo.client, variants.packing_source())  # in a shared Redis's library
    args = [Keys.base(demo.ctx), budget.tenant_bits, budget.priority_bits, budget.arrival_bits,
            "1" if past_53_for_teaching else "0"]
    for job in checked:
        args.extend(job)
    flat = script(keys=[Keys.prioritized(demo.ctx)], args=args)
    return PackOutcome(budget, checked, tuple(zip(flat[::2], (float(s) for s in flat[1::2]))))
