"""The notebooks' view of the Lua: a script or include as it lives in ``lua/``."""

from __future__ import annotations

import html
import re

from echomq_viz.core.checks import check_bool, check_str
from echomq_viz.redis_side.lua_loader import LUA_DIR, resolve_includes

__all__ = ["show_lua", "LuaCode"]

_LUA_NAME = re.compile(r"(includes/)?[A-Za-z][A-Za-z0-9]*")


class LuaCode:
    """Source code with highlighting in the notebook and plain text elsewhere."""

    def __init__(self, source: str, title: str) -> None:
        self.source, self.title = source, title

    def _repr_html_(self) -> str:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import LuaLexer

            body = highlight(self.source, LuaLexer(), HtmlFormatter(noclasses=True, nobackground=True, style="xcode"))
        except ImportError:
            body = f"<pre>{html.escape(self.source)}</pre>"
        return f"<details open><summary><code>{html.escape(self.title)}</code></summary>{body}</details>"

    def __repr__(self) -> str:
        return f"-- {self.title}\n{self.source}"


def show_lua(name: str, *, assembled: bool = False) -> LuaCode:
    """The Lua of a script (``"moveToActive"``) or include
    (``"includes/getPriorityScore"``) as it lives in ``lua/``; with
    ``assembled``, a script with its includes inlined, exactly as Redis runs it."""
    check_str("name", name, empty=True)
    if not _LUA_NAME.fullmatch(name):
        raise ValueError(f"name must be a script or include name without '-N.lua', e.g. 'moveToActive' "
                         f"or 'includes/getPriorityScore', got {name!r}")
    check_bool("assembled", assembled)
    if name.startswith("includes/"):
        path = LUA_DIR / f"{name}.lua"
        matches = [path] if path.is_file() else []
    else:
        matches = sorted(LUA_DIR.glob(f"{name}-*.lua"))
    if len(matches) != 1:
        raise LookupError(f"no Lua file for {name!r} in {LUA_DIR}")
    path = matches[0]
    title = f"lua/{path.relative_to(LUA_DIR)}"
    if assembled:
        return LuaCode(resolve_includes(path, LUA_DIR), f"{title}, includes inlined")
    return LuaCode(path.read_text(encoding="utf-8"), title)
