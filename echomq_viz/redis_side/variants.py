"""The teaching variants: real scripts with one piece swapped, run beside them.

Notebook 04 adds a job past the priority limit with addPrioritizedJob-9, its
limit alone raised (:func:`past_the_limit_source`); notebook 09 runs each wrong
design of ``lua/designs/`` in place of one piece of a real script
(:func:`design_source`) and packs three keys with ``packThreeKeys.lua``. They are
made here, from the files in ``lua/``, so that the operator's function library
(:mod:`.functions`) holds them too, wherever it is loaded from: a student may run
no code of their own.
"""

from __future__ import annotations

from echomq_viz.redis_side.lua_loader import LUA_DIR, load_scripts, resolve_includes

__all__ = ["DESIGN_DIR", "DESIGN_FILES", "PACKING_FILE", "TEACHING_PRIORITY_CEILING", "past_the_limit_source",
           "replaced_text", "design_source", "packing_source", "variant_sources"]

DESIGN_DIR = LUA_DIR / "designs"
# Each wrong design of notebook 09 (experiments/designs.py's DESIGNS) and the real command it changes.
DESIGN_FILES = {
    "arrivalInHighBits.lua": "addPrioritizedJob",
    "popLargestFirst.lua": "moveToActive",
    "millisecondClock.lua": "addPrioritizedJob",
    "counterWithoutModulo.lua": "addPrioritizedJob",
}
PACKING_FILE = "packThreeKeys.lua"
TEACHING_PRIORITY_CEILING = 2**32 - 1
_LIMIT_CHECK = "checkPriority(ARGV[6], 1)"  # the one call in addPrioritizedJob-9.lua that enforces the limit
_POP_LINE = 'local popped = rcall("ZPOPMIN", prioritizedKey)'
_SCORE_INCLUDE = LUA_DIR / "includes" / "getPriorityScore.lua"


def past_the_limit_source(real_source: str) -> str:
    """addPrioritizedJob-9's assembled source with only its priority limit
    raised to 2**32 - 1: everything else is the real script, byte for byte.

    For teaching what happens past 2**21 - 1; the normal API never uses it.
    """
    if real_source.count(_LIMIT_CHECK) != 1:
        raise RuntimeError(f"addPrioritizedJob-9 no longer calls {_LIMIT_CHECK} exactly once")
    return real_source.replace(_LIMIT_CHECK, f"checkPriority(ARGV[6], 1, {TEACHING_PRIORITY_CEILING})")


def replaced_text(script: str) -> str:
    """The exact text of the real assembled ``script`` a design replaces: the
    pop line of moveToActive, else the score include of addPrioritizedJob."""
    if script == "moveToActive":
        return _POP_LINE
    return _SCORE_INCLUDE.read_text(encoding="utf-8").rstrip("\n")


def design_source(file: str, script: str, real_source: str) -> str:
    """The real assembled ``script`` with the design ``file``'s piece swapped in.

    :raises RuntimeError: when the real script no longer holds the replaced
        text exactly once (the design would then test nothing).
    """
    replaced = replaced_text(script)
    if real_source.count(replaced) != 1:
        raise RuntimeError(f"the real {script} script no longer holds the text {file} replaces exactly once")
    return real_source.replace(replaced, resolve_includes(DESIGN_DIR / file, LUA_DIR).rstrip("\n"))


def packing_source() -> str:
    """``packThreeKeys.lua`` with its includes inlined, as Redis runs it."""
    return resolve_includes(DESIGN_DIR / PACKING_FILE, LUA_DIR)


def variant_sources() -> list[str]:
    """Every variant's source, as the experiments run them."""
    real = {name: script.source for name, script in load_scripts().items()}
    return [past_the_limit_source(real["addPrioritizedJob"]), packing_source(),
            *(design_source(file, script, real[script]) for file, script in DESIGN_FILES.items())]
