// The one visual system of every view drawn in the page (figures/visual.py holds the same for
// the static matplotlib figures): type sizes, colours, the tier palette, an SVG writer, linear
// scales with axes and ticks, and the 64-bit strip. Sizes are CSS px; no text below 12 px, no
// figure wider than MAX_WIDTH, text colours at 4.5:1 or more on what they sit on.

export const SMALL = 12;      // tick labels, box labels, notes
export const TEXT = 13;       // axis labels, legends, annotations
export const TITLE = 15;      // a figure's title
export const MAX_WIDTH = 840; // JupyterLab's output at 1024 px with the file browser closed is 844
// DejaVu first: the stills are drawn by Chromium on the machine that stores the notebooks,
// and one font everywhere keeps them the same on every such machine (matplotlib's own font)
export const FONT = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, system-ui, sans-serif";
export const MONO = "ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'DejaVu Sans Mono', monospace";
export const INK = "#1a1a1a";
export const MUTED = "#555555";   // 7.5:1 on white
export const GRID = "#d9d9d9";
export const GOOD = "#1b7f3b";    // "equal": 5.3:1 on white
export const BAD = "#b00020";     // an error or a difference: 6.9:1 on white
export const TIER_BITS_COLOR = "#1f5fa8";    // the high 32 bits, the tier
export const COUNTER_BITS_COLOR = "#b35900"; // the low 32 bits, the counter
export const WAIT_COLOR = "#c8c8c8";

// echomq_viz.core.colours: Paul Tol's "muted", fitted so any two stay apart for every reader
const TIER_PALETTE = ["#3a308b", "#88ccee", "#00742d", "#e5c86f", "#85194b",
  "#44aa99", "#a642aa", "#b3a800", "#765171", "#d37960"];
export function tierColor(priority) {
  return TIER_PALETTE[Number(BigInt(priority) % 10n)];
}

function channel(c) {
  const v = c / 255;
  return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
}
export function luminance(hex) {
  const n = parseInt(hex.slice(1), 16);
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
}
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
// black or white, whichever reads better on the fill
export function textColorOn(fill) {
  return contrast("#000000", fill) >= contrast("#ffffff", fill) ? "#000000" : "#ffffff";
}

const SPECIAL = /[&<>"]/;
export function esc(text) {
  const s = String(text);
  return SPECIAL.test(s) ? s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;") : s;
}

// attributes as SVG text; a drag writes hundreds a move, so no intermediate arrays
function attrs(map) {
  let out = "";
  for (const k in map) {
    const v = map[k];
    if (v === undefined || v === null || v === false) continue;
    out += ` ${k}="${typeof v === "number" ? v : esc(v)}"`;
  }
  return out;
}
const round = (v) => (typeof v === "number" ? Math.round(v * 100) / 100 : v);

// An SVG document: width x height CSS px, white, with its title for assistive technology
export function svgDocument(width, height, title, body) {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"`
    + ` role="img" aria-label="${esc(title)}" font-family="${esc(FONT)}" style="max-width:100%;height:auto;background:#fff">`
    + `<title>${esc(title)}</title><rect width="${width}" height="${height}" fill="#ffffff"/>${body}</svg>`;
}
export function rect(x, y, w, h, style = {}) {
  return `<rect${attrs({ x: round(x), y: round(y), width: round(Math.max(0, w)), height: round(Math.max(0, h)), ...style })}/>`;
}
export function line(x1, y1, x2, y2, style = {}) {
  return `<line${attrs({ x1: round(x1), y1: round(y1), x2: round(x2), y2: round(y2), stroke: INK, ...style })}/>`;
}
export function circle(cx, cy, r, style = {}) {
  return `<circle${attrs({ cx: round(cx), cy: round(cy), r, ...style })}/>`;
}
export function path(d, style = {}) {
  return `<path${attrs({ d, fill: "none", stroke: INK, ...style })}/>`;
}
// text at (x, y); anchor start|middle|end, baseline as SVG's dominant-baseline
export function text(x, y, content, { size = SMALL, color = INK, anchor = "start", baseline = "auto",
  weight, family, rotate } = {}) {
  const transform = rotate ? `rotate(${rotate} ${round(x)} ${round(y)})` : undefined;
  return `<text${attrs({ x: round(x), y: round(y), "font-size": size, fill: color, "text-anchor": anchor,
    "dominant-baseline": baseline, "font-weight": weight, "font-family": family, transform })}>${esc(content)}</text>`;
}
// an arrow from (x1, y1) to (x2, y2), its head at the end
export function arrow(x1, y1, x2, y2, { color = INK, width = 1.6, head = 8 } = {}) {
  const angle = Math.atan2(y2 - y1, x2 - x1);
  const wing = (side) => [x2 - head * Math.cos(angle + side * 0.45), y2 - head * Math.sin(angle + side * 0.45)];
  const [ax, ay] = wing(1);
  const [bx, by] = wing(-1);
  return line(x1, y1, x2, y2, { stroke: color, "stroke-width": width })
    + path(`M${round(ax)},${round(ay)} L${round(x2)},${round(y2)} L${round(bx)},${round(by)}`,
      { stroke: color, "stroke-width": width, "stroke-linejoin": "round" });
}

// value -> pixel, for an axis from d0..d1 onto r0..r1
export function scale(d0, d1, r0, r1) {
  const f = (v) => r0 + ((v - d0) / (d1 - d0)) * (r1 - r0);
  f.domain = [d0, d1];
  f.range = [r0, r1];
  return f;
}

// The frame of a plot: left and bottom axes with ticks and labels, a light grid if asked.
// x and y are scales; ticks are [value, label] pairs.
export function axes(x, y, { xTicks = [], yTicks = [], xLabel = "", yLabel = "", grid = false } = {}) {
  const [left, right] = x.range;
  const [bottom, top] = y.range;
  let out = "";
  if (grid) {
    for (const [v] of yTicks) out += line(left, y(v), right, y(v), { stroke: GRID, "stroke-width": 1 });
  }
  out += line(left, bottom, right, bottom, { stroke: INK, "stroke-width": 1 });
  out += line(left, bottom, left, top, { stroke: INK, "stroke-width": 1 });
  for (const [v, label] of xTicks) {
    out += line(x(v), bottom, x(v), bottom + 5, { stroke: INK });
    out += text(x(v), bottom + 8, label, { anchor: "middle", baseline: "hanging" });
  }
  for (const [v, label] of yTicks) {
    out += line(left - 5, y(v), left, y(v), { stroke: INK });
    out += text(left - 8, y(v), label, { anchor: "end", baseline: "middle" });
  }
  if (xLabel) out += text((left + right) / 2, bottom + 30, xLabel, { size: TEXT, anchor: "middle", baseline: "hanging" });
  if (yLabel) out += text(left - 46, (top + bottom) / 2, yLabel, { size: TEXT, anchor: "middle", rotate: -90 });
  return out;
}

// The score's 64 bits as cells, dark for 1 and light for 0: the tier half blue, the counter
// half orange, bits 63..53 (past a double's exact range) grey where 0 (figures.plots.draw_bit_strip).
const STRIP_FILLS = { tier: ["#c9d9ee", TIER_BITS_COLOR], counter: ["#fbe0c3", COUNTER_BITS_COLOR], beyond: "#eeeeee" };
function bitFill(i, bits) {
  const bit = bits[i] === "1" ? 1 : 0;
  return i < 11 && !bit ? STRIP_FILLS.beyond : STRIP_FILLS[i < 32 ? "tier" : "counter"][bit];
}
export function bitCells(x, y, width, bits, { height = 22 } = {}) {
  const cell = width / 64;
  let out = "";
  for (let i = 0; i < 64; i++) out += rect(x + i * cell, y, cell - 1, height, { fill: bitFill(i, bits) });
  return out;
}
// The same cells, drawn by bitCells before, given new bits in place: a drag changes fills only
export function refillBitCells(group, bits) {
  const cells = group.children;
  if (cells.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const fill = bitFill(i, bits);
    if (cells[i].getAttribute("fill") !== fill) cells[i].setAttribute("fill", fill);
  }
  return true;
}
// What the strip shows whatever its bits: the halves named, the 32-bit divide, the 2^53 mark, bit numbers
export function bitStripMarks(x, y, width, { height = 22 } = {}) {
  const cell = width / 64;
  let out = text(x + cell * 21.5, y - 6, "high 32 bits: priority (tier)", { size: TEXT, color: TIER_BITS_COLOR, anchor: "middle" })
    + text(x + cell * 48, y - 6, "low 32 bits: arrival counter", { size: TEXT, color: COUNTER_BITS_COLOR, anchor: "middle" });
  out += line(x + 32 * cell - 0.5, y - 2, x + 32 * cell - 0.5, y + height + 2, { stroke: INK, "stroke-width": 2 });
  out += line(x + 11 * cell - 0.5, y, x + 11 * cell - 0.5, y + height, { stroke: "#888888", "stroke-dasharray": "2 2" });
  const tick = (i, label, anchor) => text(x + (i + 0.5) * cell, y + height + 6, label, { anchor, baseline: "hanging" });
  out += tick(0, "63", "middle") + tick(10, "53", "middle") + tick(31, "32", "end") + tick(32, "31", "start") + tick(63, "0", "middle");
  out += text(x + cell * 5.5, y + height + 24, "beyond 2⁵³", { color: MUTED, anchor: "middle", baseline: "hanging" });
  return out;
}

// A figure in named parts, [name, svg text, patch?] drawn in order, each in a <g data-part>: the
// still is the whole document; the page (drawFigure) redraws only the parts whose text changed,
// so a drag re-parses the few marks that moved, never the axes. A part's optional patch(group)
// brings the drawn group to that same text in place (attributes only), or returns false.
export function partsBody(parts) {
  return parts.map(([name, body]) => `<g data-part="${esc(name)}">${body}</g>`).join("");
}
export function drawFigure(container, width, height, title, parts) {
  const svg = container.firstElementChild;
  const names = parts.map(([name]) => name).join(",");
  const drawn = container.__emqParts;
  if (!svg || !drawn || drawn.names !== names || drawn.width !== width || drawn.height !== height) {
    container.innerHTML = svgDocument(width, height, title, partsBody(parts));
    container.__emqParts = { names, width, height, title, texts: parts.map(([, body]) => body) };
    return;
  }
  if (drawn.title !== title) {
    svg.setAttribute("aria-label", title);
    svg.querySelector("title").textContent = title;
    drawn.title = title;
  }
  const groups = svg.querySelectorAll(":scope > g[data-part]");
  parts.forEach(([, body, patch], i) => {
    if (drawn.texts[i] !== body) {
      if (!patch || patch(groups[i]) === false) groups[i].innerHTML = body;
      drawn.texts[i] = body;
    }
  });
}

// The CSS every view's page side shares: one look for the controls, captions and status lines
export const VIEW_CSS = `
.emq-view { font-family: ${FONT}; color: ${INK}; max-width: ${MAX_WIDTH}px; }
.emq-view .emq-row { display: flex; align-items: center; gap: 10px; margin: 4px 0; flex-wrap: wrap; }
.emq-view label.emq-name { width: 110px; font-size: 13px; }
.emq-view input[type=range] { flex: 1 1 200px; max-width: min(420px, 60vw); accent-color: ${TIER_BITS_COLOR}; }
.emq-view input[type=number] { width: 130px; font: 13px ${MONO}; }
.emq-view output { font: 13px ${MONO}; min-width: 120px; }
.emq-view .emq-readout { font: 13px/1.5 ${MONO}; white-space: pre-wrap; overflow-wrap: break-word; margin: 6px 0; }
.emq-view .emq-figure svg { display: block; }
.emq-view .emq-caption { font-size: 12px; color: #333; margin: 2px 0 6px 0; line-height: 1.45; }
.emq-view .emq-status { font-size: 13px; min-height: 1.6em; overflow-wrap: anywhere; }
.emq-view .emq-status.emq-bad { color: ${BAD}; }
.emq-view .emq-status.emq-good { color: ${GOOD}; }
.emq-view .emq-note { color: ${MUTED}; }
.emq-view button { font-size: 13px; padding: 3px 10px; }
/* off, or held while its request runs: legible still (the browser's own grey is about 2:1) */
.emq-view button:disabled, .emq-view button[aria-disabled="true"] { color: ${MUTED}; cursor: default; }
.emq-view :focus-visible { outline: 2px solid ${TIER_BITS_COLOR}; outline-offset: 2px; }
/* a view restored without its kernel still moves: ipywidgets' "disconnected" marks do not apply */
.jupyter-widgets-disconnected:has(> .emq-view)::before { display: none !important; }
.jupyter-widgets-disconnected:has(> .emq-view) { opacity: 1 !important; }
`;

// A tier band's fill, as echomq_viz.core.colours.band_style: even tiers (the darker colours) a
// stronger tint hatched "//" in the tier colour, odd ones a pale plain tint, so neighbouring bands
// differ in pattern and lightness as well as hue
export function bandStyle(priority) {
  const even = BigInt(priority) % 2n === 0n;
  return { color: tierColor(priority), fillOpacity: even ? 0.24 : 0.12, edgeOpacity: 0.5, hatch: even ? "//" : null };
}

// A band of tier `priority` filling x, y, w, h; `patternId` names the <pattern> of its hatch, if it has
// one (bandPattern writes it into the SVG's <defs>)
export function band(x, y, w, h, priority, patternId) {
  const style = bandStyle(priority);
  let out = rect(x, y, w, h, { fill: style.color, "fill-opacity": style.fillOpacity });
  if (style.hatch) out += rect(x, y, w, h, { fill: `url(#${patternId})` });
  return out;
}
export function bandPattern(patternId, priority, spacing = 6) {
  const style = bandStyle(priority);
  // vertical lines turned 45° clockwise: "/" on the screen, as matplotlib's hatch
  return `<pattern${attrs({ id: patternId, patternUnits: "userSpaceOnUse", width: spacing, height: spacing,
    patternTransform: "rotate(45)" })}>`
    + line(0, 0, 0, spacing, { stroke: style.color, "stroke-opacity": style.edgeOpacity, "stroke-width": 1.2 })
    + "</pattern>";
}
