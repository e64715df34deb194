// Notebook 05's frontier: 16 consecutive counters at one priority, each at the low part of the
// double the Lua stores for it. The page computes every stored double (score.js); only the
// button asks the kernel, to add the jobs on Redis and send back the order Redis popped them in.

import { INK, MUTED, GRID, TITLE, TEXT, GOOD, BAD, svgDocument, rect, line, circle, text, scale, axes } from "./visual.js";
import { TIER_SPAN, COUNTER_MASK, priorityScore, storedScore, thousands, power } from "./score.js";
import { spacing, gapText, mantissaEnd } from "./doubles.js";
import { renderStopsView } from "./stops_view.js";

const WIDTH = 800;
const HEIGHT = 430;

// Each counter of the window with its stored double and that double's low part (score - p * 2^32)
function points(state) {
  const { priority, first_counter: first, width } = state;
  const base = BigInt(priority) * TIER_SPAN;
  const out = [];
  for (let c = first; c < first + width; c++) {
    const stored = storedScore(priority, c);
    const low = Number(BigInt(stored) - base);
    out.push({ counter: c, stored, low, exact: BigInt(stored) === priorityScore(priority, c) });
  }
  return out;
}

// [stored double, counters] for each double two or more counters share, by ascending score
function groups(pts) {
  const out = [];
  for (const p of pts) {
    const last = out[out.length - 1];
    if (last && last[0] === p.stored) last[1].push(p.counter);
    else out.push([p.stored, [p.counter]]);
  }
  return out.filter(([, counters]) => counters.length > 1);
}

const gapAt = (priority) => spacing(priority * Number(TIER_SPAN));

// The figure's text alternative (widgets.frontier.frontier_describe says the same)
export function describe(state) {
  const { priority, first_counter: first, width } = state;
  const pts = points(state);
  const rounded = pts.filter((p) => !p.exact).length;
  const shared = groups(pts).length;
  const gap = gapAt(priority);
  const said = `Stored score against arrival counter for counters ${thousands(first)}-${thousands(first + width - 1)} `
    + `at priority ${thousands(priority)}, where neighbouring doubles are ${gapText(gap)} apart: `
    + `${rounded} of ${width} rounded off the exact diagonal`;
  if (!shared) return `${said}.`;
  return `${said}, ${shared} groups of counters sharing one score; a double whose mantissa ends in 0 `
    + `takes ${gap + 1} counters (it wins both ties), one ending in 1 takes ${gap - 1}.`;
}

// Which counters round and which share a score (widgets.frontier.frontier_summary)
export function summary(state) {
  const pts = points(state);
  const rounded = pts.filter((p) => !p.exact).map((p) => String(p.counter));
  const lines = [`priority ${thousands(state.priority)}: scores `
    + (rounded.length ? `ROUNDED for counters ${rounded.join(", ")}` : "exact")];
  for (const [stored, counters] of groups(pts)) {
    lines.push(`counters ${counters.join(", ")} share the score ${thousands(BigInt(stored))}`);
  }
  return lines.join("\n");
}

// Labels every `step` counters, so the widest label fits between two
function tickStep(width, pixels, widest) {
  let step = 1;
  while ((pixels / width) * step < widest * 7.6 + 10) step += 1;
  return step;
}

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from
export function still(state) {
  const { priority, first_counter: first, width } = state;
  const pts = points(state);
  const gap = gapAt(priority);
  const rounded = pts.filter((p) => !p.exact).length;
  const [left, right, top, bottom] = [120, 690, 96, 330];
  const lows = pts.map((p) => p.low);
  const lo = Math.min(first, ...lows) - 1;
  const hi = Math.max(first + width - 1, ...lows) + 1;
  const x = scale(first - 0.5, first + width - 0.5, left, right);
  const y = scale(lo, hi, bottom, top);
  const last = first + width - 1;
  const xStep = tickStep(width, right - left, thousands(last).length);
  const xTicks = pts.filter((p, i) => i % xStep === 0).map((p) => [p.counter, thousands(p.counter)]);
  // the doubles of this tier in view: every multiple of the gap
  const doubles = [];
  for (let d = Math.ceil(lo / gap) * gap; d <= hi; d += gap) doubles.push(d);
  const yStep = Math.ceil(doubles.length / 10);
  const yTicks = doubles.filter((d, i) => i % yStep === 0).map((d) => [d, thousands(d)]);
  let body = text(20, 24, `priority ${thousands(priority)}: ${rounded} of ${width} scores rounded; `
    + `neighbouring doubles here are ${gapText(gap)} apart`, { size: TITLE, weight: 600 });
  body += text(20, 46, gap > 1
    ? `A tie goes to the double whose mantissa ends in 0: it takes ${gap + 1} counters, one ending in 1 takes ${gap - 1}.`
    : "Every counter has a double of its own: every point stays on the diagonal.", { size: TEXT });
  body += text(20, 78, `stored score − priority × ${power(2, 32)}`
    + (gap > 1 ? "; grey lines: the doubles; right: the counters on each, its mantissa's last bit" : ""),
  { size: TEXT, color: MUTED });
  if (gap > 1) for (const d of doubles) body += line(left, y(d), right, y(d), { stroke: GRID, "stroke-width": 1 });
  body += axes(x, y, { xTicks, yTicks, xLabel: `arrival counter (INCR pc % ${power(2, 32)})` });
  const [from, to] = [Math.max(first - 0.5, lo), Math.min(last + 0.5, hi)];
  body += line(x(from), y(from), x(to), y(to),
    { stroke: "#888888", "stroke-dasharray": "5 4", "stroke-width": 1.2 });
  for (const p of pts) {
    if (p.exact) {
      body += circle(x(p.counter), y(p.low), 5.5, { fill: GOOD, stroke: "#ffffff", "stroke-width": 1 });
    } else {
      body += line(x(p.counter), y(p.counter), x(p.counter), y(p.low), { stroke: BAD, "stroke-dasharray": "2 2" });
      body += rect(x(p.counter) - 5, y(p.low) - 5, 10, 10, { fill: BAD, stroke: "#ffffff", "stroke-width": 1 });
    }
  }
  if (gap > 1) { // how many counters each double in view holds, and its mantissa's last bit
    for (const d of doubles) {
      const held = pts.filter((p) => p.low === d).length;
      if (!held) continue;
      const end = mantissaEnd(Number(BigInt(priority) * TIER_SPAN + BigInt(d)));
      const full = end === 0 ? gap + 1 : gap - 1; // fewer in view: the window cuts the run
      body += text(right + 8, y(d), `×${held}${held < full ? ` of ${full}` : ""} · …${end}`, { baseline: "middle", color: INK });
    }
  }
  const legendY = 400;
  body += circle(left + 6, legendY, 5, { fill: GOOD });
  body += text(left + 18, legendY, "stored exactly, on the dashed diagonal", { baseline: "middle" });
  body += rect(left + 300, legendY - 5, 10, 10, { fill: BAD });
  body += text(left + 318, legendY, "rounded to a double (dotted: by how much)", { baseline: "middle" });
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

// Redis's pop order, marked against the order the page predicts: by stored score, then id bytes
export function answerLine(state) {
  const answer = state.answer || {};
  if (!answer.popped) return ["", "note"];
  const scoreOf = new Map(answer.added.map((id, i) => [id, storedScore(answer.priority, answer.first_counter + i)]));
  const predicted = [...answer.added].sort((a, b) => scoreOf.get(a) - scoreOf.get(b) || (a < b ? -1 : a > b ? 1 : 0));
  const same = predicted.join(" ") === answer.popped.join(" ");
  const fifo = answer.popped.join(" ") === answer.added.join(" ");
  const which = answer.priority === state.priority && answer.first_counter === state.first_counter ? ""
    : ` (for priority ${thousands(answer.priority)}, counters from ${thousands(answer.first_counter)})`;
  return [`Redis popped ${answer.popped.join(" ")}: ${fifo ? "first in, first out" : "FIFO BROKEN"}; the page's `
    + `prediction from the stored scores: ${same ? "the same order" : `DIFFERENT, ${predicted.join(" ")}`}${which}`,
  same ? "good" : "bad"];
}

const NAMES = ["stops", "priority", "first_counter", "width", "link", "redis_enabled", "answer", "status"];
function render({ model, el }) {
  return renderStopsView({ model, el }, { css: "emq-frontier", names: NAMES,
    counter: { name: "first_counter", label: "first counter", exactLabel: "exact first counter",
      top: (m) => Number(COUNTER_MASK) - m.get("width") },
    button: { label: "Add these jobs on Redis, then drain", what: "Adding the jobs on Redis",
      message: (m) => ({ kind: "run", priority: m.get("priority"), first_counter: m.get("first_counter") }) },
    still, describe, readout: summary, answerLine });
}

export default { render };
