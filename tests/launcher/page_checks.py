"""Checks of a rendered page that ride on a page load the browser tests
already make: the same page resized to each of :data:`SIZES`, a screenshot
of each under build/screenshots/, and one assertion listing every problem:

- an output area that scrolls or clips sideways, a figure or image wider
  than its output area, a page that scrolls sideways, a view's text cut
  (a button label, a preformatted line), a slider's readout on its track;
- a figure shown smaller than drawn, so that its smallest text (12 px at
  full size, held there by tests/figures/test_visual.py) falls below 11 px;
- a label of a control in type under 11 px, or with a WCAG contrast below
  4.5:1 on what it stands on;
- a view drawn in the page (``.emq-view``: an SVG figure, its caption, its
  own controls) whose figure is wider than 840 px, runs past its output or is
  clipped by its view, shows any text under 12 px (the page draws none
  smaller, and shows its figures at full size), has a text outside its
  figure, or text on a fill (``data-on``) under 4.5:1;
- once, at the first size: a page view that drew no figure (a few shapes are
  one when its text alternative says it is empty), whose caption
  is missing, not read out as it changes, or not its figure's ``<title>``,
  or with a range that has no accessible name;
- with a :class:`Watch` attached before the page loaded: a request to
  another host, an error in the console.
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit

from echomq_viz.figures import visual

SIZES = ((1400, 900), (1024, 768))
PAGE_TEXT_PX = 12  # the least text a page view shows (visual.js SMALL, drawn at full size)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1", "")


def _jupyterlab_before(major: int, minor: int) -> bool:
    return tuple(int(part) for part in version("jupyterlab").split(".")[:2]) < (major, minor)


# Errors of JupyterLab's own code, not of our pages, tolerated only at the versions that have them:
# (message, where its stack must point). Before 4.5, JupyterLab's table of contents can keep a stale
# heading index while Run All re-renders the markdown cells, then throws in its getIdForHeading
# (jupyterlab/jupyterlab#17706, fixed by #17720); the lowest-versions CI run met it at 4.0.2.
UPSTREAM_PAGE_ERRORS = ((("Cannot read properties of undefined (reading 'type')", "/static/lab/jlab_core."),)
                        if _jupyterlab_before(4, 5) else ())
# A notebook opened in JupyterLab or Notebook 7 shows its stored views from the widget state saved
# in it; once the kernel connects, ipywidgets' manager takes the kernel's state instead, and a
# stored view the page renders only then (a cell below, under load) finds no model and logs this
# (jupyterlab/jupyterlab#15361, jupyter-widgets/ipywidgets#3823). Run All replaces every such
# output; the tests then assert that no output says "Error displaying widget".
STORED_VIEW_ERRORS = (("Error: widget model not found", "@jupyter-widgets/jupyterlab-manager/"),)

LAYOUT_JS = """([minScale, maxWidth, pageText]) => {
  const problems = [];
  const name = el => (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/)[0] : el.tagName);
  const root = document.scrollingElement;
  if (root.scrollWidth > root.clientWidth + 1)
    problems.push(`the page scrolls sideways: ${root.scrollWidth} px in ${root.clientWidth}`);
  for (const panel of document.querySelectorAll('.jp-WindowedPanel-outer'))
    if (panel.scrollWidth > panel.clientWidth + 1)
      problems.push(`the notebook scrolls sideways: ${panel.scrollWidth} px in ${panel.clientWidth}`);
  const areas = [...document.querySelectorAll('.jp-OutputArea-output, .output_subarea')];
  for (const area of areas) {
    const box = area.getBoundingClientRect();
    if (!box.width) continue;
    if (area.scrollWidth > area.clientWidth + 1)
      problems.push(`an output scrolls or clips sideways: ${area.scrollWidth} px in ${area.clientWidth}`);
    for (const el of area.querySelectorAll('canvas, img, .jupyter-matplotlib, .widget-box, .widget-inline-hbox, .widget-toggle-buttons, .emq-view, .emq-view svg')) {
      const r = el.getBoundingClientRect();
      if (r.width && r.right > box.right + 1)
        problems.push(`${name(el)} ${Math.round(r.width)} px wide runs ${Math.round(r.right - box.right)} px past its output (${Math.round(box.width)} px)`);
    }
  }
  for (const el of document.querySelectorAll('.jupyter-widgets pre, .widget-html-content, .widget-label, .widget-button, .widget-toggle-button')) {
    if (el.getBoundingClientRect().width && el.scrollWidth > el.clientWidth + 1)
      problems.push(`text runs out of its ${name(el)}: "${el.innerText.trim().slice(0, 40)}" needs ${el.scrollWidth} px of ${el.clientWidth}`);
  }
  for (const slider of document.querySelectorAll('.widget-hslider')) {
    const readout = slider.querySelector('.widget-readout'), track = slider.querySelector('.noUi-target');
    if (!readout || !track || !readout.getBoundingClientRect().width) continue;
    const gap = readout.getBoundingClientRect().left - track.getBoundingClientRect().right;
    if (gap < 0) problems.push(`a slider's readout "${readout.innerText.trim()}" sits ${Math.round(-gap)} px on its track`);
  }
  for (const canvas of document.querySelectorAll('.jupyter-matplotlib-canvas-div canvas:first-child')) {
    const drawn = canvas.width / (window.devicePixelRatio || 1);
    const shown = canvas.getBoundingClientRect().width;
    if (drawn && shown && shown / drawn < minScale)
      problems.push(`a figure drawn ${Math.round(drawn)} px wide is shown at ${Math.round(shown)} px: its text below 11 px`);
  }
  const rgba = s => { if (/^#[0-9a-f]{6}$/i.test(s)) { const n = parseInt(s.slice(1), 16); return [n >> 16 & 255, n >> 8 & 255, n & 255, 1]; }
                     const m = s.match(/[\\d.]+/g) || []; return m.length >= 3 ? [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1] : [0, 0, 0, 0]; };
  const lum = ([r, g, b]) => { const f = c => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
                               return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const over = (top, under) => top.slice(0, 3).map((c, i) => c * top[3] + under[i] * (1 - top[3]));
  const background = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0) layers.push(c); if (c[3] >= 1) break; }
    return layers.reverse().reduce((under, top) => over(top, under), [255, 255, 255]); };
  const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  for (const svg of document.querySelectorAll('.emq-view .emq-figure svg')) {
    const r = svg.getBoundingClientRect();
    if (!r.width) continue;
    if (r.width > maxWidth + 0.5 || +svg.getAttribute('width') > maxWidth)
      problems.push(`a page view's figure is ${Math.round(Math.max(r.width, +svg.getAttribute('width')))} px wide, more than ${maxWidth}`);
    for (const box of [svg.closest('.emq-figure'), svg.closest('.emq-view')])
      if (box && box.scrollWidth > box.clientWidth + 1)
        problems.push(`a page view clips its figure sideways: ${box.scrollWidth} px in ${box.clientWidth}`);
    for (const t of svg.querySelectorAll('text')) {
      const words = t.textContent.trim();
      if (!words) continue;
      const m = t.getScreenCTM();
      const shown = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (shown < pageText - 0.05) problems.push(`"${words.slice(0, 40)}" in a page view's figure shows at ${shown.toFixed(1)} px`);
      const b = t.getBoundingClientRect();
      if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1)
        problems.push(`"${words.slice(0, 40)}" runs out of its page view's figure`);
      const on = t.getAttribute('data-on');
      if (on && contrast(rgba(getComputedStyle(t).fill), rgba(on)) < 4.5)
        problems.push(`"${words.slice(0, 40)}" on ${on} in a page view's figure at ${contrast(rgba(getComputedStyle(t).fill), rgba(on)).toFixed(2)}:1`);
    }
  }
  const labels = '.widget-label, .widget-readout, .widget-button, .widget-toggle-button, .widget-checkbox label, .widget-html-content, .widget-label-basic, '
    + '.emq-view label, .emq-view output, .emq-view button, .emq-view .emq-readout, .emq-view .emq-caption, .emq-view .emq-status';
  for (const el of document.querySelectorAll(labels)) {
    if (!el.innerText.trim() || !el.getBoundingClientRect().width || el.closest(':disabled, .mod-disabled, [disabled]')) continue;
    const style = getComputedStyle(el);
    if (parseFloat(style.fontSize) < 11)
      problems.push(`"${el.innerText.trim().slice(0, 40)}" in ${style.fontSize} type`);
    const bg = background(el);
    const fg = over(rgba(style.color), bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) problems.push(`"${el.innerText.trim().slice(0, 40)}" at ${ratio.toFixed(2)}:1`);
  }
  return problems;
}"""


class Watch:
    """What a page asks and logs from the moment it is attached: requests to
    another host, console errors. Attach it before the page loads."""

    def __init__(self, page, *, upstream_console: tuple[tuple[str, str], ...] = ()) -> None:
        """``upstream_console``: (start, source) of console errors that are upstream's on this
        page (:data:`STORED_VIEW_ERRORS` where a notebook opens with its stored views): each one
        met is counted and printed, not a problem; both its start and its source must match."""
        self.foreign: list[str] = []
        self.errors: list[str] = []
        self.upstream_console = upstream_console
        self.tolerated = 0
        page.on("request", self._request)
        page.on("console", self._console)
        page.on("pageerror", self._page_error)

    def _request(self, request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS:
            self.foreign.append(request.url)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        if any(message.text.startswith(start) and source in message.text for start, source in self.upstream_console):
            self.tolerated += 1
            print(f"tolerated, upstream's own: console error: {message.text.splitlines()[0]}")  # shown with -rA
            return
        self.errors.append(message.text[:300])

    def _page_error(self, error) -> None:
        where = next((line.strip() for line in (error.stack or "").splitlines()[1:2]), "")
        if any(error.message == message and place in where for message, place in UPSTREAM_PAGE_ERRORS):
            print(f"tolerated, JupyterLab's own: page error: {error.message} {where}")  # shown with -rA
            return
        self.errors.append(f"page error: {error.message} {where}".strip())

    def tolerate_so_far(self, upstream_console: tuple[tuple[str, str], ...]) -> None:
        """Count as upstream's the console errors met so far that match ``upstream_console``
        (a page load the test abandons and reloads); errors from now on are judged as before."""
        kept = []
        for text in self.errors:
            if any(text.startswith(start) and source in text for start, source in upstream_console):
                self.tolerated += 1
                print(f"tolerated, upstream's own, in the abandoned load: console error: {text.splitlines()[0]}")
            else:
                kept.append(text)
        self.errors = kept

    def problems(self, console: bool = True) -> list[str]:
        return ([f"asked another host: {url}" for url in self.foreign]
                + [f"console error: {text}" for text in self.errors if console])


def min_scale() -> float:
    """The least a figure may be scaled on the page and keep its smallest text at 11 px."""
    return visual.MIN_TEXT_PX / visual.px(visual.SMALL)


def layout_problems(page) -> list[str]:
    return page.evaluate(LAYOUT_JS, [min_scale(), visual.MAX_FIGURE_PX, PAGE_TEXT_PX])


# What a page view must be whatever the size: a drawn figure, captioned by its own title (a screen
# reader hears the caption as it changes), every range named.
PAGE_VIEWS_JS = """() => {
  const problems = [];
  const words = s => (s || '').split(/\\s+/).filter(Boolean).join(' ');
  const named = r => words(r.getAttribute('aria-label') || [...(r.labels || [])].map(l => l.innerText).join(' ')
    || (r.getAttribute('aria-labelledby') || '').split(/\\s+/).map(id => (document.getElementById(id) || {}).textContent || '').join(' '));
  document.querySelectorAll('.emq-view').forEach((view, index) => {
    const which = `page view ${index + 1} (${[...view.classList].filter(c => c !== 'emq-view').join(' ')})`;
    const svg = view.querySelector('.emq-figure svg');
    const title = words(((svg && svg.querySelector(':scope > title')) || {}).textContent);
    const shapes = svg ? svg.querySelectorAll('rect, line, circle, path, text').length : 0;
    // a few shapes are a figure when its own text alternative says it is empty (06's unread map)
    if (!svg || shapes === 0 || (shapes < 10 && !/\\bempty\\b/.test(title))) {
      problems.push(`${which} drew no figure`);
      return;
    }
    const caption = view.querySelector('.emq-caption');
    if (!title) problems.push(`${which}: its figure has no <title>`);
    if (!caption || !words(caption.textContent)) problems.push(`${which}: no caption`);
    else {
      if (words(caption.textContent) !== `Figure: ${title}`)
        problems.push(`${which}: its caption "${words(caption.textContent).slice(0, 120)}" is not its figure's title "${title.slice(0, 120)}"`);
      if (caption.getAttribute('aria-live') !== 'polite')
        problems.push(`${which}: its caption is not read out as it changes (aria-live="polite")`);
    }
    for (const range of view.querySelectorAll('input[type=range]'))
      if (!named(range)) problems.push(`${which}: a range without an accessible name: ${range.outerHTML.slice(0, 120)}`);
    // a line that says what the kernel or Redis answered is read out as it changes, as the caption is
    for (const line of view.querySelectorAll('.emq-status'))
      if (line.getAttribute('aria-live') !== (line.getAttribute('role') === 'status' ? 'polite' : 'off'))
        problems.push(`${which}: a status line not read out as it changes (role="status" aria-live="polite"): `
          + line.outerHTML.slice(0, 120));
  });
  return problems;
}"""


def page_view_problems(page) -> list[str]:
    return page.evaluate(PAGE_VIEWS_JS)


def close_lab_sidebar(page, width: int) -> None:
    """Below 1200 px, JupyterLab's file browser goes: open, it leaves a
    1024 px screen a 592 px output, narrower than the 900 px a figure is
    made for (a reader on a small screen closes it too)."""
    current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if width < 1200 and current.count():
        current.first.click()  # a real press: lumino's tab bar takes pointer events, not click()
        page.locator("#jp-left-stack").wait_for(state="hidden", timeout=5000)


# Resolves once the page's boxes (its size, every cell, output and view) held still for ten frames
# in a row (two seconds at most): a resize lays out over a few frames, and on a loaded machine
# over more. Quicker than a fixed wait where the page settles at once, surer where it does not.
# (A frame also ends after 100 ms without one: a page that paints no frames still resolves.)
LAID_OUT_JS = """async () => {
    const started = performance.now();
    const frame = () => new Promise(resolve => { requestAnimationFrame(() => resolve()); setTimeout(resolve, 100); });
    const look = () => [document.documentElement.scrollWidth, document.documentElement.scrollHeight,
        ...[...document.querySelectorAll('.jp-Cell, .jp-OutputArea-output, .widget-box, .emq-view')].map(el => {
            const box = el.getBoundingClientRect();
            return [box.left, box.top, box.width, box.height].map(Math.round).join(',');
        })].join(';');
    let last = look(), quiet = 0;
    while (quiet < 10 && performance.now() - started < 2000) {
        await frame();
        const now = look();
        quiet = now === last ? quiet + 1 : 0;
        last = now;
    }
}"""


def check_page(page, shots: Path, label: str, watch: Watch | None = None, sizes=SIZES,
               prepare=lambda page, width: None) -> list[str]:
    """Resize ``page`` to each of ``sizes`` (``prepare(page, width)`` then
    readies it), screenshot it as ``<label>-<w>x<h>.png`` and list what is
    wrong; the page is left at its first viewport again. Asserts nothing:
    the caller does, with the list."""
    shots.mkdir(parents=True, exist_ok=True)
    before = page.viewport_size
    problems: list[str] = []
    try:
        for width, height in sizes:
            page.set_viewport_size({"width": width, "height": height})
            prepare(page, width)
            page.evaluate(LAID_OUT_JS)  # the notebook and the widgets lay out again
            page.screenshot(path=str(shots / f"{label}-{width}x{height}.png"))
            problems += [f"at {width}x{height}: {problem}" for problem in dict.fromkeys(layout_problems(page))]
            if (width, height) == sizes[0]:
                problems += page_view_problems(page)
    finally:
        page.set_viewport_size(before)
    if watch is not None:
        problems += watch.problems()
    return problems
