"""What every view drawn in the page shares: an anywidget model holding the
state, a kernel that checks every value the page sends, and a status line.

The page (``page/<view>.js``) draws the figure, its controls, its caption and
its readouts from the model's values, and redraws on every move without the
kernel; the kernel keeps the state, the checks and every Redis call. A value
from the page is never trusted: each bounded value is checked against bounds
the kernel holds (:meth:`PageFigure.bounds`), and one outside them is refused
with one line in the view's status, the value left as it was.
"""

from __future__ import annotations

import contextlib
import html
from typing import Any, Iterator

import anywidget
import traitlets

from echomq_viz.core.notation import thousands
from echomq_viz.widgets.page_modules import page_module
from echomq_viz.widgets.view import SHOWN, View, one_line

__all__ = ["PageFigure", "PageStatus", "PageView", "sent"]


def sent(value: object, width: int = 40) -> str:
    """A value the page sent, as a refusal line names it: its repr, cut to ``width``
    characters (a crafted message may send megabytes; the line stays one short line)."""
    shown = repr(value)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


class PageFigure(anywidget.AnyWidget):
    """An anywidget whose module is ``page/<module>.js``; subclasses declare
    their synced traits and :meth:`bounds`."""

    module = ""  # the page module's name: page/<module>.js
    #: the values the page's own controls move: the only ones a message from the page may set.
    #: Everything else (what Redis did, the bounds of other values, the status line) only the
    #: kernel writes, whatever a crafted message says.
    page_writes: tuple[str, ...] = ()
    status = traitlets.Unicode("").tag(sync=True)  # one line from the kernel: a refusal or an error

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "module" in cls.__dict__:  # not the subclasses traitlets makes to add traits
            cls._esm = page_module(cls.module)
        # No echo of what the page sent: the page keeps the moves it has not sent yet (a live view
        # sends four a second), and an echo of an earlier send would put them back where they were.
        # A value the kernel refuses still goes back to the page, as an update of its own.
        for trait in cls.class_traits(sync=True).values():
            trait.metadata["echo_update"] = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_msg(self._answer)
        # every bounded value as it starts: what a refused value goes back to, and what the
        # bounds of another value are reckoned from while a message is being taken
        self.__dict__.setdefault("_good_values", {}).update({name: getattr(self, name) for name in self.bounds()})

    def accepted(self, name: str) -> Any:
        """A bounded value as last accepted. While a message from the page is
        being taken, the attribute already holds the value proposed: bounds
        that depend on other values reckon from these instead."""
        return self.__dict__.get("_good_values", {}).get(name, getattr(self, name))

    def _answer(self, _widget: object, content: object, _buffers: object) -> None:
        """The page asks whether a kernel listens before it offers Redis (controls.js askKernel)."""
        if isinstance(content, dict) and content.get("kind") == "ping":
            self.send({"kind": "pong"})

    def set_state(self, sync_data: dict) -> None:
        """Values from the page: one its controls do not move (:attr:`page_writes`) or of the
        wrong kind (a text for a number, a float for a whole number) is refused in one line
        like one out of bounds, and the others of the message are taken. A new message ends
        the last one's refusal line."""
        if self.status.startswith("refused "):
            self.status = ""
        taken = {}
        for name, value in sync_data.items():
            if name not in self.page_writes:  # a crafted message may name anything, megabytes long
                shown = name if name.isidentifier() and len(name) <= 40 else sent(name)
                self.status = f"refused {shown}: only the kernel writes it{self.kernel_source}"
                continue
            trait = self.traits().get(name)
            if trait is not None and trait.metadata.get("sync"):
                try:  # the trait's own type check, as traitlets makes it (not the bounds: _checked)
                    if not (value is None and trait.allow_none) and hasattr(trait, "validate"):
                        trait.validate(self, value)
                except traitlets.TraitError:
                    self.status = f"refused {name} {sent(value)}: not a value it can take"
                    continue
            taken[name] = value
        if taken:
            # the view acts once a message, whatever number of its values the message changes
            # (PageView._on_figure_change): a second act would clear the first one's error line
            self.__dict__["_acted"] = set()
            try:
                super().set_state(taken)
            finally:
                self.__dict__.pop("_acted", None)
        # what the kernel did not take goes back to the page as it stands in the kernel (newer
        # ipywidgets send a value changed in validation themselves; 8.0 does not)
        back = [name for name in sync_data if name in self.keys and self.get_state(name)[name] != sync_data[name]]
        if back:
            self.send_state(back)

    #: what a refusal of a value only the kernel writes says it comes from (", from what Redis did")
    kernel_source = ""

    def _kernel_only(self, proposal: dict) -> Any:
        """A value only the kernel writes (what Redis did, what it read): taken inside
        :meth:`kernel_writes`; from the page, refused in one line and left as the kernel
        last wrote it. A subclass calls it from ``@traitlets.validate(...)``."""
        name = proposal["trait"].name
        kept = self.__dict__.setdefault("_kernel_values", {})
        if self.__dict__.get("_writing"):
            kept[name] = proposal["value"]
            return proposal["value"]
        self.status = f"refused {name}: only the kernel writes it{self.kernel_source}"
        return kept.get(name, proposal["trait"].default())

    @contextlib.contextmanager
    def kernel_writes(self) -> Iterator[None]:
        """Write values only the kernel writes, sent to the page in one message."""
        self.__dict__["_writing"] = True
        try:
            with self.hold_sync():
                yield
        finally:
            self.__dict__["_writing"] = False

    def bounds(self) -> dict[str, tuple[int, int]]:
        """Each bounded value's (lowest, highest), as the kernel holds them."""
        return {}

    def _checked(self, proposal: dict) -> Any:
        """The proposed value if it is a whole number within bounds; else the
        value as it was, and the refusal in the status line. A subclass calls
        it from ``@traitlets.validate(...)`` for each bounded value."""
        trait = proposal["trait"]
        name, value = trait.name, proposal["value"]
        low, high = self.bounds().get(name, (None, None))
        # the last value that passed: a message from the page is validated when its
        # traits are set together, by which time the attribute already holds the new value
        good = self.__dict__.setdefault("_good_values", {})
        if low is None:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.status = (f"refused {name} {sent(value)}: it must be a whole number in "
                           f"{thousands(low)}..{thousands(high)}")
            return good.get(name, trait.default())
        good[name] = value
        return value


class PageStatus:
    """The view's one status line, kept in the page model (what :class:`~.view.Status`
    is for a widget view): a note, or an error shown in red."""

    def __init__(self, figure: PageFigure) -> None:
        self.figure = figure
        self.text = ""

    def note(self, text: str) -> None:
        self.text = text
        self.figure.status = text

    def error(self, exc: BaseException) -> None:
        self.text = "error: " + one_line(exc)
        self.figure.status = self.text

    def clear(self) -> None:
        self.text = ""
        self.figure.status = ""


class PageView(View):
    """A view drawn in the page: its ``widget`` is its :class:`PageFigure`.
    It displays as the widget and a text; the still a reader without a kernel
    sees is made from the page's own drawing when the notebook is stored
    (:mod:`echomq_viz.launcher._stills`)."""

    figure: PageFigure
    shown_traits: tuple[str, ...] = ()  # what a later cell must not move (tests/launcher/test_stills.py)

    def __init__(self, figure: PageFigure) -> None:
        self.figure = figure
        self.widget = figure
        self.status = PageStatus(figure)

    def _redraw_figure(self) -> None:  # the page redraws itself
        pass

    def _on_figure_change(self, names: list[str], action) -> None:
        """Run ``action`` (guarded, as every control's) when one of the
        figure's values changes for good: a value the kernel refused leaves
        it as it was, and its refusal in the status line."""
        callback = self._callback(action, ())

        def changed(change: dict) -> None:
            # a refused value is set back where it was: traitlets then reports old == new
            if change["old"] != change["new"] == getattr(self.figure, change["name"]):
                acted = self.figure.__dict__.get("_acted")  # this message's acts, while one is taken
                if acted is not None:
                    if callback in acted:
                        return
                    acted.add(callback)
                callback(change)

        self.figure.observe(changed, names)

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):  # anywidget answers (data, metadata)
            bundle = bundle[0]
        bundle = {**bundle, "text/plain": repr(self)}
        shown = {"view": repr(self), "caption": self.describe(), "guess_first": self.guess_first,
                 "answered": self.answered(),
                 "values": {self.figure.model_id: {name: self.figure.get_state(name)[name]
                                                   for name in self.shown_traits}}}
        return bundle, {SHOWN: shown}

    def caption_html(self) -> str:
        """The caption the page shows under the figure, as HTML."""
        return f"<b>Figure:</b> {html.escape(self.describe())}"
