"""The reader's turn in the stored notebooks: a question is asked, the reader acts, then the
answer is explained. No text a reader meets before acting (the markdown outside a ``<details>``
fold, and every printed output that is not a folded answer) names or implies the answer; the
answer is there, folded. The pairs of question and answer are written down below.

The code cells are left out: the app hides them, and they call the package rather than state
results. The views themselves are stored unanswered (tests/launcher/test_stills.py); here their
page module also says nothing of the answer before the guess, and names the guess after it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from page_runner import page_calls

from echomq_viz.launcher._stills import VIEW, WIDGET_STATE

ROOT = Path(__file__).resolve().parents[1]
FOLD = re.compile(r"<details\b.*?</details>", re.S)
FOLDED_ANSWER = "<details class='echomq-viz-answer'>"  # echomq_viz.widgets.Answer


@dataclass(frozen=True)
class Question:
    """``asked``: words of the question as the reader meets them; ``view``: the code cell of the
    view the reader acts in; ``open_from``: the first cell that may speak openly (the next
    question, or what to remember); ``answers``: patterns any one of which states the answer;
    ``read_before``: notebooks read before this one that speak of the same thing, whose prose
    must not state the answer either."""

    notebook: str
    asked: str
    view: str
    open_from: str
    answers: tuple[str, ...]
    read_before: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.notebook[:2]}: {self.asked[:40]}"


_PATHS_08 = (r"to the back\b", r"\bback of (?:its|the|their|tier \d)\b", r"\bcounter 8\b", r"\bcounter 0\b",
             r"\bway in at the front", r"\blifo\b[^.\n]*\bfront\b", r"\bahead of every job",
             r"does not belong in the prioritized set", r"\b(?:moves|moved|goes|went) (?:it |job 5 )?to the wait list",
             r"left the sorted set", r"the answer is the same", r"pc[^.\n]*(?:from 7 to 8|stayed at 7|still 7)",
             r"counter is not the one", r"files\s+the\s+job\s+with\s+addJobWithPriority",
             r"the\s+include\s+the\s+add\s+uses")
_DESIGNS_09 = (r"ignores priorities", r"plain (?:FIFO|first in, first out)", r"worst tier", r"last arrival first",
               r"newest job first", r"overtakes? job", r"jumps? ahead", r"filed as tier", r"this design pops",
               r"\bwhy:", r"in the order of their clocks")
_BUDGET_09 = (r"11 \+ 10 \+ 32", r"tenant 11 \+ priority 10", r"one bit of headroom", r"priority[^.\n]*\b10 bits",
              r"tenant[^.\n]*\b11 bits", r"12 \+ 10 \+ 31", r"tenant 12 \+ priority 10", r"\b31 bits",
              r"4,000 tenants need")

QUESTIONS = (
    Question("01-one-score-two-keys.ipynb", "Which of the two scores is the smaller, and by how much?",
             "HeroView(demo, priority=1, counter=1)", "## Live: does Redis agree?",
             (r"still\s+the\s+smaller", r"by\s+exactly\s+one", r"tier-1\s+score\s+is[^.]*smaller",
              r"the\s+tier\s+decides\s+before", r"one\s+short\s+of\s+the\s+next\s+tier",
              r"gap\s+between\s+the\s+tiers:\s+1\b")),
    Question("02-which-pops-first.ipynb", "A worker asks for the next job. Which one does it get?",
             "ComparisonView(demo, a=(1, 4_000_000_000), b=(2, 1))", "## Same tier",
             (r"\bA wins\b", r"pops A first", r"popped job A", r"\btakes A\b", r"A has the smaller score",
              r"high bits (?:decide|beats?|win)", r"better tier always")),
    Question("02-which-pops-first.ipynb", "Which one does the worker get now?",
             "ComparisonView(demo, a=(1, 4_000_000_000), b=(2, 1))", "## Lower number, higher precedence",
             (r"\bB\b[^.\n]*\bwins\b", r"pops B first", r"popped job B", r"B has the smaller score",
              r"(?:counter|low bits|arrival) decides?", r"earlier arrival[^.\n]*wins")),
    # moveToActive-11.lua's header says "the 'wait' list (jobs without priority)\n comes first": 03 prints it
    # after the reader's pops and their folded answer, in "The script a worker runs".
    Question("03-inside-the-consume.ipynb", "Which job comes out first?",
             "ConsumeView(demo, priorities=priorities, waiting=1)", "## Drain, and check the order",
             (r"job 13[^.\n]*(?:first|front)", r"popped job +13", r"wait-list job (?:in front|first)",
              r"(?:comes|came) out first[^.\n]*\b13\b", r"without priority[^.\n]*comes first",
              r"only\s+if\s+(?:that|it)\s+(?:found|finds)\s+nothing", r"before\s+any\s+tier",
              r"wait\s+list\s+(?:comes\s+)?first"),
             read_before=("00-start-here.ipynb", "01-one-score-two-keys.ipynb", "02-which-pops-first.ipynb")),
    Question("05-where-exactness-ends.ipynb", "Slide to 2²¹, where the doubles are 2 apart",
             "FrontierView(demo, priority=PRIORITY_LIMIT, first_counter=4)", "## The double itself",
             (r"takes?\s+3\s+counters", r"take\s+5\s+and\s+3", r"leave\s+the\s+diagonal",
              r"do\s+not\s+take\s+two\s+counters")),
    Question("06-inspect-a-real-queue.ipynb", "and which will share a score with another job?",
             'InspectorView(queue="{" + demo.queue + "}")', "## A stock BullMQ queue",
             (r"\b41\b[^.\n]*\b40\b", r"\b43 and 45\b", r"\b42, 44 and 46\b", r"share one score",
              r"2⁵³ \+ 44", r"9,007,199,254,741,036", r"'43', '44', '45'", r"\b3 jobs\b")),
    Question("08-every-path-scores-the-same-way.ipynb", "Ask for priority 3 again.",
             'PathView(lab, "same tier")', "## All paths at once", _PATHS_08),
    Question("08-every-path-scores-the-same-way.ipynb", "Now change job 5 from tier 3 to tier 1",
             'PathView(lab, "better tier")', "## All paths at once", _PATHS_08),
    Question("08-every-path-scores-the-same-way.ipynb", "this time with lifo=True",
             'PathView(lab, "lifo")', "## All paths at once", _PATHS_08),
    Question("08-every-path-scores-the-same-way.ipynb", "Change job 5 to priority 0",
             'PathView(lab, "no priority")', "## All paths at once", _PATHS_08),
    Question("08-every-path-scores-the-same-way.ipynb", "Where does job 8 land in tier 2",
             'PathView(lab, "due")', "## All paths at once", _PATHS_08,
             read_before=("03-inside-the-consume.ipynb",)),
    Question("08-every-path-scores-the-same-way.ipynb", "Where does job 8 land this time?",
             'PathView(lab, "promote")', "## All paths at once", _PATHS_08,
             read_before=("03-inside-the-consume.ipynb",)),
    Question("08-every-path-scores-the-same-way.ipynb", "Does the job get its old place back?",
             'PathView(lab, "retry")', "## All paths at once", _PATHS_08),
    Question("09-designs-that-fail.ipynb", "which order will that design pop?",
             "DesignsView(runner)", "## Exercise", _DESIGNS_09, read_before=("02-which-pops-first.ipynb",)),
    Question("09-designs-that-fail.ipynb", "Pack all three into one score",
             "PackingView(pack_demo", "### Too few bits, too many", _BUDGET_09),
    Question("09-designs-that-fail.ipynb", "Can you find a budget for 4,000 tenants?",
             "PackingView(pack_demo", "### Too few bits, too many", _BUDGET_09),
)


def _notebook(name: str) -> dict:
    return json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    return "".join(cell["source"])


def _words(text: str) -> str:
    """``text`` with each run of white space one space, as a page lays it out."""
    return " ".join(text.split())


def _plain(text: str) -> str:
    """Markdown as it reads: emphasis, code marks and tags gone."""
    return re.sub(r"<[^>]+>", "", text).replace("**", "").replace("*", "").replace("`", "")


def shown(cell: dict) -> str:
    """What a reader meets of ``cell`` without opening anything: its markdown outside the
    folds, or its printed outputs that are not folded answers (a view is left to its module)."""
    if cell["cell_type"] == "markdown":
        return _plain(FOLD.sub("", _source(cell)))
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output["output_type"] == "stream":
            parts.append("".join(output["text"]))
        elif VIEW not in data and not "".join(data.get("text/html", "")).startswith(FOLDED_ANSWER):
            parts.append("".join(data.get("text/plain", "")))
    return "\n".join(parts)


def folded(cell: dict) -> str:
    """What ``cell`` keeps one click away: its markdown folds, or its folded answers."""
    if cell["cell_type"] == "markdown":
        return _plain("\n".join(FOLD.findall(_source(cell))))
    return "\n".join(_plain("".join(output["data"]["text/html"])) for output in cell.get("outputs", [])
                     if "".join(output.get("data", {}).get("text/html", "")).startswith(FOLDED_ANSWER))


def _first(cells: list[dict], words: str, what: str, question: Question) -> int:
    found = [i for i, cell in enumerate(cells)
             if words in _words(_source(cell)) or words in _words(_plain(_source(cell)))]
    assert found, f"{question}: no cell holds the {what} {words!r}"
    return found[0]


@pytest.mark.parametrize("question", QUESTIONS, ids=str)
def test_no_text_before_the_readers_act_names_the_answer(question):
    cells = _notebook(question.notebook)["cells"]
    asked = _first(cells, question.asked, "question", question)
    view = _first(cells, question.view, "view", question)
    open_from = _first(cells, question.open_from, "end of the question", question)
    assert view < open_from and asked < open_from, f"{question}: asked after the place where it may be answered"
    assert question.asked in _words(shown(cells[asked])), f"{question}: the question itself is folded away"
    for index in range(open_from):
        text = shown(cells[index])
        for pattern in question.answers:
            said = re.search(pattern, text, re.I)
            assert not said, (f"{question}: cell {index} states the answer before the reader acts: "
                              f"{said.group(0)!r} in {text[max(0, said.start() - 80):said.end() + 80]!r}; "
                              f"fold it (<details> in markdown, widgets.Answer for a printed run)")


@pytest.mark.parametrize("question", [question for question in QUESTIONS if question.read_before], ids=str)
def test_no_notebook_read_before_names_the_answer(question):
    """A notebook read earlier is text before the act too, its folds included: they answer its own
    questions and are open by the time the reader gets here. Its prose only: the printed outputs of
    code are left out (03 prints moveToActive's header, which the notebook's prose does not speak for)."""
    for name in question.read_before:
        assert name < question.notebook, f"{question}: {name} is not read before it"
        for index, cell in enumerate(_notebook(name)["cells"]):
            if cell["cell_type"] != "markdown":
                continue
            text = _plain(_source(cell))
            for pattern in question.answers:
                said = re.search(pattern, text, re.I)
                assert not said, (f"{question}: {name} cell {index} states the answer before the reader gets "
                                  f"there: {said.group(0)!r} in {text[max(0, said.start() - 80):said.end() + 80]!r}")


@pytest.mark.parametrize("question", QUESTIONS, ids=str)
def test_the_answer_is_one_click_away(question):
    """The patterns are the answer's words: they find it where it is kept, folded."""
    cells = _notebook(question.notebook)["cells"]
    kept = "\n".join(folded(cell) for cell in cells)
    assert any(re.search(pattern, kept, re.I) for pattern in question.answers), \
        f"{question}: none of its answer's words are in any fold of the notebook"


def test_the_check_sees_what_a_reader_sees():
    """Folds are left out and everything else is read, in markdown and in outputs."""
    markdown = {"cell_type": "markdown", "source": "Which? <details><summary>Why</summary>**A wins**</details> Go."}
    assert shown(markdown) == "Which?  Go." and folded(markdown) == "WhyA wins"
    answer = {"cell_type": "code", "source": "", "outputs": [
        {"output_type": "display_data", "data": {"text/html": FOLDED_ANSWER + "<summary>Open</summary><pre>A wins</pre>"
                                                 "</details>", "text/plain": "Open (folded: 1 lines)"}},
        {"output_type": "stream", "name": "stdout", "text": ["popped job 13\n"]}]}
    assert shown(answer) == "popped job 13\n" and folded(answer) == "OpenA wins"


# -- the views: nothing of the answer before the guess, the guess named after it ----------------


def _page_state(name: str, view: str) -> dict:
    """The stored page model of the view ``view`` (its text/plain start) of notebook ``name``."""
    nb = _notebook(name)
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    [model_id] = [output["data"][VIEW]["model_id"] for cell in nb["cells"] for output in cell.get("outputs", [])
                  if "".join(output.get("data", {}).get("text/plain", "")).startswith(view)]
    pending = [model_id]
    while pending:  # the view's box, down to its one page figure
        model = state[pending.pop()]
        if model.get("model_module") == "anywidget":
            return {key: value for key, value in model["state"].items() if not key.startswith("_")}
        pending += [child.removeprefix("IPY_MODEL_") for child in model["state"].get("children", [])]
    raise AssertionError(f"{name}: {view} holds no page figure")


@pytest.mark.slow  # Node.js, a process of its own
def test_02s_view_shows_no_score_before_the_guess_and_names_the_guess_after(tmp_path):
    stored = _page_state("02-which-pops-first.ipynb", "ComparisonView(")
    assert stored["guess"] == ""
    scores = ("8,294,967,296", "8,589,934,593")  # A's and B's, as 02's folded answer has them
    guesses = {guess: {**stored, "guess": guess} for guess in ("A", "B")}
    ran = {**stored, "guess": "B", "redis_answer": {"guess": "B", "popped": "A", "a": [1, 4_000_000_000], "b": [2, 1],
                                                    "score_a": "8294967296", "score_b": "8589934593"}}
    still, description, before = page_calls("comparison", [("still", stored), ("describe", stored),
                                                           ("guessLine", stored)], tmp_path)
    assert not any(score in text for score in scores for text in (still, description)) and before == ""
    assert not re.search(r"\b[AB] pops first|smaller score|\bright\b|\bwrong\b", still + description)
    right, wrong, redis = page_calls("comparison", [("verdict", guesses["A"]), ("verdict", guesses["B"]),
                                                    ("redisLine", ran)], tmp_path)
    assert right.startswith("You guessed A: right — job A pops first.")
    assert wrong.startswith("You guessed B: wrong — job A pops first.")
    assert redis.startswith("You guessed B: wrong — Redis popped job A first")
