"""Notebook 02's comparison: guess which of two jobs pops first, then see the scores and ask Redis.

The page draws it (``page/comparison.js``): the four sliders, the guess, both
scores (computed there with BigInt) and the verdict; a drag sends the kernel
nothing. The scores stay hidden until the reader guesses, or deliberately
chooses to see them without guessing, and "Run it on Redis" opens only then.
A guess is sent to the kernel when made; a run sends the jobs the page shows,
which the kernel checks against its bounds before it writes anything.
"""

from __future__ import annotations

import traitlets

from echomq_viz.core.checks import check_int, describe
from echomq_viz.core.notation import thousands
from echomq_viz.core.score import COUNTER_MASK, PRIORITY_LIMIT, TIER_SPAN, priority_score
from echomq_viz.experiments.live import Comparison, Demo
from echomq_viz.widgets.answer import Answer
from echomq_viz.widgets.page_view import PageFigure, PageView, sent
from echomq_viz.widgets.view import require_demo

__all__ = ["ComparisonView", "ComparisonFigure", "verdict_text", "guess_line", "redis_line", "compare_on_redis",
           "comparison_answer"]

GUESSES = ("A", "B")
SKIP = "skip"  # the guess of a reader who chose to see it without guessing
JOB_TRAITS = ("a_priority", "a_counter", "b_priority", "b_counter")


def _job(what: str, job: object, max_priority: int) -> tuple[int, int]:
    """A ``(priority, counter)`` pair after checking both."""
    if not isinstance(job, (tuple, list)) or len(job) != 2:
        raise TypeError(f"{what} must be a (priority, counter) pair, got {describe(job)}")
    return (check_int(f"{what} priority", job[0], 1, max_priority),
            check_int(f"{what} counter", job[1], 0, COUNTER_MASK))


class ComparisonFigure(PageFigure):
    """The comparison's page model: both jobs, the guess ("" none yet, "A",
    "B", or "skip"), whether Redis can be asked, and Redis's last answer."""

    module = "comparison"

    page_writes = (*JOB_TRAITS, "guess")  # what its page's controls move
    max_priority = traitlets.Int(5).tag(sync=True)
    a_priority = traitlets.Int(1).tag(sync=True)
    a_counter = traitlets.Int(4_000_000_000).tag(sync=True)
    b_priority = traitlets.Int(2).tag(sync=True)
    b_counter = traitlets.Int(1).tag(sync=True)
    guess = traitlets.Unicode("").tag(sync=True)
    run_enabled = traitlets.Bool(False).tag(sync=True)
    # {popped, score_a, score_b, a, b, guess}: the scores as decimal text, the jobs and guess of that run
    redis_answer = traitlets.Dict().tag(sync=True)

    def bounds(self) -> dict[str, tuple[int, int]]:
        return {"a_priority": (1, self.max_priority), "b_priority": (1, self.max_priority),
                "a_counter": (0, COUNTER_MASK), "b_counter": (0, COUNTER_MASK)}

    @traitlets.validate(*JOB_TRAITS)
    def _bounded(self, proposal: dict) -> int:
        return self._checked(proposal)

    @traitlets.validate("guess")
    def _a_guess(self, proposal: dict) -> str:
        good = self.__dict__.setdefault("_good_values", {})  # as PageFigure._checked keeps them
        value = proposal["value"]
        if value not in ("", *GUESSES, SKIP):
            self.status = f"refused guess {sent(value)}: it must be A, B or {SKIP}"
            return good.get("guess", "")
        good["guess"] = value
        return value

    def refusal(self, values: dict[str, object]) -> str:
        """Why the page's ``values`` (trait name -> value) cannot be taken, in
        one line; "" when every one is a whole number within the bounds."""
        for name, value in values.items():
            if name == "guess":
                if value not in ("", *GUESSES, SKIP):
                    return f"refused guess {sent(value)}: it must be A, B or {SKIP}"
                continue
            low, high = self.bounds()[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                return f"refused {name} {sent(value)}: it must be a whole number in {thousands(low)}..{thousands(high)}"
        return ""


class ComparisonView(PageView):
    """Job A one tier better, job B far ahead on the counter. Guess, see the
    composite scores, then let the real scripts on Redis decide.

    :param demo: the demo queue "Run it on Redis" uses; None disables it.
    :param a, b: the starting ``(priority, counter)`` of each job.
    :param max_priority: the sliders' highest priority.
    """

    shown_traits = (*JOB_TRAITS, "guess")
    guess_first = True

    def __init__(self, demo: Demo | None = None, *, a: tuple[int, int] = (1, 4_000_000_000),
                 b: tuple[int, int] = (2, 1), max_priority: int = 5) -> None:
        max_priority = check_int("max_priority", max_priority, 1, 20)
        a, b = _job("job A", a, max_priority), _job("job B", b, max_priority)
        self.demo = None if demo is None else require_demo(demo)
        super().__init__(ComparisonFigure(max_priority=max_priority, a_priority=a[0], a_counter=a[1],
                                          b_priority=b[0], b_counter=b[1], run_enabled=demo is not None))
        self.result: Comparison | None = None
        self.redis_text = ""
        self._run = self._callback(self.run_on_redis, ())  # the button's guarded path: errors become one line
        self.figure.on_msg(self._heard)

    def __repr__(self) -> str:
        return f"ComparisonView(a={self.job_a}, b={self.job_b}, prediction={self.prediction!r})"

    @property
    def job_a(self) -> tuple[int, int]:
        return self.figure.a_priority, self.figure.a_counter

    @property
    def job_b(self) -> tuple[int, int]:
        return self.figure.b_priority, self.figure.b_counter

    @property
    def prediction(self) -> str | None:
        """The guess: "A", "B", "skip" (seen without guessing) or None."""
        return self.figure.guess or None

    def answered(self) -> bool:
        return bool(self.figure.guess) or self.result is not None

    def predict(self, choice: str) -> "ComparisonView":
        """Make the reader's guess from code: ``"A"`` or ``"B"``."""
        if not isinstance(choice, str):
            raise TypeError(f"choice must be 'A' or 'B', got {describe(choice)}")
        if choice not in GUESSES:
            raise ValueError(f"choice must be 'A' or 'B', got {choice!r}")
        self.figure.guess = choice
        return self

    def reveal(self) -> "ComparisonView":
        """Show the scores without a guess, as "Show me without guessing" does."""
        self.figure.guess = SKIP
        return self

    def set(self, a: tuple[int, int] | None = None, b: tuple[int, int] | None = None) -> "ComparisonView":
        """Move the jobs from code, as the sliders do; a job no slider can show
        is refused, and then neither moves."""
        high = self.figure.max_priority
        a = None if a is None else _job("job A", a, high)
        b = None if b is None else _job("job B", b, high)
        before = (self.job_a, self.job_b)
        with self.figure.hold_sync():
            for prefix, job in (("a", a), ("b", b)):
                if job is not None:
                    setattr(self.figure, f"{prefix}_priority", job[0])
                    setattr(self.figure, f"{prefix}_counter", job[1])
            if (self.job_a, self.job_b) != before:
                self.figure.guess = ""  # a guess is about the pair it was made on: a new pair asks anew
        return self

    def verdict_text(self) -> str:
        """Both composite scores, which is smaller, and why; after a guess,
        the guess named and judged first (what the page shows)."""
        guess = guess_line(self.figure.guess, self.job_a, self.job_b)
        return (guess + "\n" if guess else "") + verdict_text(self.job_a, self.job_b)

    def describe(self) -> str:
        jobs = {"A": self.job_a, "B": self.job_b}
        if not self.figure.guess:  # the jobs the bars stand for, not their scores
            named = "; ".join(f"job {name} priority {p:,}, counter {c:,}" for name, (p, c) in jobs.items())
            return f"Two score bars, hidden until you guess which job pops first: {named}."
        scores = {name: priority_score(*job) for name, job in jobs.items()}
        parts = "; ".join(f"job {name} (priority {p:,}, counter {c:,}) scores {scores[name]:,}"
                          for name, (p, c) in jobs.items())
        if scores["A"] == scores["B"]:
            return (f"Two stacked score bars, tier part below, counter part on top: {parts}; "
                    "equal scores, so Redis orders them by member.")
        first = "A" if scores["A"] < scores["B"] else "B"
        return (f"Two stacked score bars, tier part below, counter part on top: {parts}; "
                f"{first}'s is smaller, so {first} pops first.")

    def run_on_redis(self) -> Comparison:
        """Add A and B through ``addPrioritizedJob-9`` (pc set so the counters
        match the sliders), then consume once with ``moveToActive-11``. Only
        after a guess (or :meth:`reveal`), as the button."""
        demo = self._require_demo()
        guess = self.figure.guess
        if not guess:
            raise RuntimeError("guess first: Run it on Redis answers after a guess "
                               "(predict('A') or predict('B'), or reveal() to see it without guessing)")
        a, b = self.job_a, self.job_b
        result = demo.compare(a, b)
        answer = {"popped": result.popped, "score_a": str(int(result.score_a)), "score_b": str(int(result.score_b)),
                  "a": list(a), "b": list(b), "guess": guess}
        self.result = result
        self.redis_text = redis_line(answer, a, b)
        self.figure.redis_answer = answer
        return result

    def _heard(self, _widget: object, content: object, _buffers: object) -> None:
        """The page's "Run it on Redis": the jobs and guess it shows, checked
        against the kernel's bounds before anything is written; the page hears
        back when it is done."""
        if not (isinstance(content, dict) and content.get("kind") == "run"):
            return
        a, b = content.get("a"), content.get("b")
        if not all(isinstance(job, list) and len(job) == 2 for job in (a, b)):
            self.status.note(f"refused the run: the jobs must be two (priority, counter) pairs, got {sent(a)} and {sent(b)}")
        else:
            values = {**dict(zip(JOB_TRAITS, [*a, *b])), "guess": content.get("guess")}
            refused = self.figure.refusal(values)
            if refused:
                self.status.note(refused)
            else:
                with self.figure.hold_sync():
                    for name, value in values.items():
                        setattr(self.figure, name, value)
                self._run()
        self.figure.send({"kind": "ran"})


def verdict_text(a: tuple[int, int], b: tuple[int, int]) -> str:
    """Both composite scores of jobs ``a`` and ``b``, which is smaller, and why."""
    (pa, ca), (pb, cb) = a, b
    sa, sb = priority_score(pa, ca), priority_score(pb, cb)
    lines = [f"A: {thousands(pa)} × 0x100000000 + {thousands(ca % TIER_SPAN):>13} = {thousands(sa):>16}",
             f"B: {thousands(pb)} × 0x100000000 + {thousands(cb % TIER_SPAN):>13} = {thousands(sb):>16}"]
    if sa == sb:
        lines.append("Equal scores: ZPOPMIN then orders by member, not by arrival.")
        return "\n".join(lines)
    first = "A" if sa < sb else "B"
    if pa != pb:
        why = (f"The tiers differ, so the high bits decide: one priority step is {TIER_SPAN:,},\n"
               f"more than any counter gap (at most {COUNTER_MASK:,}).")
    else:
        why = "Same tier: the high bits tie and the low bits, the arrival counter, decide."
    lines.append(f"{first} has the smaller score, so ZPOPMIN pops {first} first.")
    lines.append(why)
    return "\n".join(lines)


def _first(a: tuple[int, int], b: tuple[int, int]) -> str:
    sa, sb = priority_score(*a), priority_score(*b)
    return "" if sa == sb else "A" if sa < sb else "B"


def guess_line(guess: str, a: tuple[int, int], b: tuple[int, int]) -> str:
    """The reader's guess named and judged against the scores of ``a`` and
    ``b`` (the page's first line of the verdict); "" before a guess."""
    first = _first(a, b)
    if not guess:
        return ""
    if guess == SKIP:
        return f"You chose to see it without guessing: {f'job {first} pops first.' if first else 'the scores are equal.'}"
    if not first:
        return f"You guessed {guess}: a tie — the scores are equal, so Redis orders them by member."
    return f"You guessed {guess}: {'right' if guess == first else 'wrong'} — job {first} pops first."


def redis_line(answer: dict, a: tuple[int, int], b: tuple[int, int]) -> str:
    """What Redis did on a run (``ComparisonFigure.redis_answer``), with the
    guess made then, as the page shows it while the jobs are ``a`` and ``b``."""
    if not answer or not answer.get("popped"):
        return ""
    guess, popped = answer["guess"], answer["popped"]
    who = ("You chose to see it without guessing" if guess == SKIP
           else f"You guessed {guess}: {'right' if guess == popped else 'wrong'}")
    ran_a, ran_b = tuple(answer["a"]), tuple(answer["b"])
    moved = (ran_a, ran_b) != (tuple(a), tuple(b))
    return (f"{who} — Redis popped job {popped} first (stored scores A {int(answer['score_a']):,}, "
            f"B {int(answer['score_b']):,})"
            + (f", for A ({ran_a[0]:,}, {ran_a[1]:,}) and B ({ran_b[0]:,}, {ran_b[1]:,}): the jobs have moved since"
               if moved else ""))


def compare_on_redis(demo: Demo, a: tuple[int, int], b: tuple[int, int]) -> str:
    """What the view shows once guessed and run, for jobs ``a`` and ``b``, from
    a run of its own on ``demo`` (no view is touched): the verdict, then which
    job the real scripts popped."""
    demo = require_demo(demo)
    a, b = _job("job A", a, PRIORITY_LIMIT), _job("job B", b, PRIORITY_LIMIT)
    result = demo.compare(a, b)
    return verdict_text(a, b) + "\nRedis popped job {} first (stored scores A {:,}, B {:,})".format(
        result.popped, int(result.score_a), int(result.score_b))


def comparison_answer(demo: Demo, a: tuple[int, int], b: tuple[int, int]) -> Answer:
    """The answer to the view's question, folded, from a run on Redis."""
    return Answer("Guessed? Open to see the scores and what Redis popped", compare_on_redis(demo, a, b))
