"""Whether the installed packages are inside the ranges echomq-viz was tested with.

The launcher subclasses and patches private parts of Jupyter packages (see the
comments in ``pyproject.toml``). pip does not upgrade a package a user already
has, so an older Jupyter, or a newer major release, would break the app with no
word of why. At start the launcher says in one line which installed package is
outside its range, before anything starts. The ranges are read from this
package's own metadata (its ``Requires-Dist``): ``pyproject.toml`` is the one list.
"""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement

__all__ = ["DISTRIBUTION", "declared_ranges", "out_of_range", "version_warning"]

DISTRIBUTION = "echomq-viz"


def declared_ranges(distribution: str = DISTRIBUTION) -> list[Requirement]:
    """The base requirements of ``distribution`` that apply to this Python (no extras)."""
    try:
        lines = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []  # run from a folder that was never installed: nothing to check against
    ranges = []
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            ranges.append(requirement)
    return ranges


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def out_of_range(ranges: list[Requirement]) -> list[tuple[Requirement, str | None]]:
    """(requirement, installed version or None when missing) for every
    package installed outside its range, or not at all."""
    problems = []
    for requirement in ranges:
        installed = _installed(requirement.name)
        if installed is None or not requirement.specifier.contains(installed, prereleases=True):
            problems.append((requirement, installed))
    return problems


def version_warning(distribution: str = DISTRIBUTION) -> str | None:
    """One line naming every package installed outside its tested range, and
    the pip command that brings it in; None when all are in range."""
    problems = out_of_range(declared_ranges(distribution))
    if not problems:
        return None
    found = ", ".join(f"{req.name} {installed or 'missing'} (tested: {req.specifier or 'any'})"
                      for req, installed in problems)
    fix = " ".join(f"'{req.name}{req.specifier}'" for req, _ in problems)
    return f"outside the tested versions, expect failures: {found}; pip install {fix}"
