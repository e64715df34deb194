// Notebook 04's bands: tiers as bands of the score axis, the jobs Redis holds as points inside them.
// The page draws what the kernel read back from Redis: `points`, each job as [priority, counter]
// (ZRANGE WITHSCORES split in two; at most 5,000, the kernel's bound on jobs), and `counts`, what
// getCountsPerPriority-2 returned. The edge slider moves in the page alone; tiers, jobs and "pc
// starts at" refill the queue on Redis, so they go to the kernel when let go, never while dragged.

import { INK, MUTED, TITLE, TEXT, VIEW_CSS, svgDocument, circle, line, text, scale, axes, tierColor, band,
  bandPattern } from "./visual.js";
import { COUNTER_MASK, TIER_SPAN, priorityScore, thousands, power } from "./score.js";
import { slider, numberBox, statusLine, send, askKernel, uid, NEEDS_KERNEL, listen, figureBlock } from "./controls.js";

// The bounds the kernel holds (widgets.bands: TIERS_MAX, JOBS_MIN, JOBS_MAX, START_MAX); the page follows
export const LIMITS = { tiers: [1, 8], jobs: [10, 5000], start: [0, Number(COUNTER_MASK) - 5000], edge: [1, 7] };
export const bounds = () => LIMITS;
export const WIDTH = 820;
export const HEIGHT = 508;
const REACH = 4; // scores shown each side of the edge
const ANSWER_WAIT = 120000; // ms for a refill of 5,000 jobs on a loaded machine

const RANGE = Number(TIER_SPAN);
// the two panels' frames; their titles stand above, clear of the top band's last dots
const CLOSE = { left: 104, right: 462, top: 64, bottom: 300 };
const FULL = { left: 616, right: 800, top: 64, bottom: 300 };
const EDGE = { middle: 430, step: 30, dots: 432 };

function tiersText(tiers) {
  return tiers === 1 ? "tier 1" : `tiers 1-${tiers}`;
}

// The tiers the data was read for: one count per tier (before any data, the model's own)
function drawnTiers(state) {
  return (state.counts || []).length || Number(state.tiers) || 1;
}

// "getCountsPerPriority-2 on Redis: tier 1: 45, ..." (widgets.bands.BandsView.counts_text)
export function countsText(state) {
  return `getCountsPerPriority-2 on Redis: ${(state.counts || []).map(([p, n]) => `tier ${p}: ${n}`).join(", ")}`;
}

// The figure's text alternative (widgets.bands.BandsView.describe says the same)
export function describe(state) {
  const counts = state.counts || [];
  const total = counts.reduce((sum, [, n]) => sum + Number(n), 0);
  const parts = counts.map(([p, n]) => `tier ${p}: ${thousands(n)}`).join(", ");
  const named = tiersText(drawnTiers(state));
  const edge = Number(state.edge) || 1;
  const counters = (state.points || []).map(([, counter]) => Number(counter));
  const held = counters.length
    ? ` (counters ${thousands(Math.min(...counters))} to ${thousands(Math.max(...counters))})` : "";
  return `${named[0].toUpperCase()}${named.slice(1)} as bands of the score axis with ${thousands(total)} jobs as `
    + `points${held}, each inside its tier's band (${parts}), up close and at full scale; below them, the largest `
    + `tier-${edge} score and the smallest tier-${edge + 1} score, one apart.`;
}

// Dots at (x, y) px, one per pixel: jobs closer than a pixel are one dot (5,000 jobs stay a few
// hundred elements), each dot standing for at least one job of its tier
function dots(placed, radius) {
  const seen = new Set();
  const parts = [];
  for (const [p, x, y] of placed) {
    const key = (p * 4096 + Math.round(x)) * 4096 + Math.round(y);
    if (seen.has(key)) continue;
    seen.add(key);
    // written out, not through circle(): thousands of them, and nothing in them to escape
    parts.push(`<circle cx="${Math.round(x * 100) / 100}" cy="${Math.round(y * 100) / 100}" r="${radius}" `
      + `fill="${tierColor(p)}" stroke="${INK}" stroke-width="0.6"/>`);
  }
  return parts.join("");
}

function bands(x, y, tiers, ids) {
  let out = "";
  for (let p = 1; p <= tiers; p++) {
    out += band(x.range[0], y(p + 1), x.range[1] - x.range[0], y(p) - y(p + 1), p, `${ids}-${p}`);
  }
  return out;
}

// Up close: the counters in use across, each band stretched so they fill it (a schematic: the axis
// names tiers, not scores)
function closeUp(points, tiers, ids) {
  const counters = points.map(([, c]) => Number(c));
  const lo = counters.length ? Math.min(...counters) : 0;
  const hi = counters.length ? Math.max(Math.max(...counters), lo + 1) : 1;
  const width = hi - lo + 1;
  const pad = 0.02 * width;
  const x = scale(lo - pad, hi + pad, CLOSE.left, CLOSE.right);
  const y = scale(1, tiers + 1, CLOSE.bottom, CLOSE.top);
  const yTicks = [];
  for (let p = 1; p <= tiers; p++) yTicks.push([p + 0.5, `tier ${p}`]);
  const middle = Math.round((lo + hi) / 2);
  const xTicks = [[lo, thousands(lo)], [hi, thousands(hi)]];
  if (middle !== lo && middle !== hi) xTicks.splice(1, 0, [middle, thousands(middle)]);
  let out = bands(x, y, tiers, ids);
  for (let p = 1; p <= tiers; p++) {
    out += line(x(lo), y(p), x(hi), y(p + (hi - lo) / width), { stroke: tierColor(p), "stroke-width": 1, "stroke-opacity": 0.9 });
  }
  out += axes(x, y, { xTicks, yTicks });
  out += dots(points.map(([p, c]) => [p, x(c), y(p + (c - lo) / width)]), 3.2);
  out += text(CLOSE.left, 24, "the jobs up close", { size: TITLE, weight: 600 });
  out += text(CLOSE.left, 42, "schematic: each band stretched to hold the counters in use", { color: MUTED });
  out += text(22, (CLOSE.top + CLOSE.bottom) / 2, "tier", { size: TEXT, anchor: "middle", rotate: -90 });
  out += text((CLOSE.left + CLOSE.right) / 2, CLOSE.bottom + 30, `arrival counter: ${thousands(lo)} … ${thousands(hi)}`,
    { size: TEXT, anchor: "middle", baseline: "hanging" });
  return out;
}

// At full scale: the whole counter range across, score / 2^32 up, every band to scale
function fullScale(points, tiers, ids) {
  const x = scale(-0.03 * RANGE, 1.03 * RANGE, FULL.left, FULL.right);
  const y = scale(1, tiers + 1, FULL.bottom, FULL.top);
  const yTicks = [];
  for (let p = 1; p <= tiers + 1; p++) yTicks.push([p, String(p)]);
  const xTicks = [[0, "0"], [RANGE / 2, power(2, 31)], [RANGE, power(2, 32)]];
  let out = bands(x, y, tiers, ids);
  for (let p = 1; p <= tiers; p++) {
    out += line(x(0), y(p), x(RANGE - 1), y(p + (RANGE - 1) / RANGE), { stroke: tierColor(p), "stroke-width": 1, "stroke-opacity": 0.9 });
  }
  out += axes(x, y, { xTicks, yTicks });
  out += dots(points.map(([p, c]) => [p, x(c), y(p + c / RANGE)]), 3.2);
  out += text(FULL.left - 44, 24, `at full scale: ${thousands(points.length)} jobs`, { size: TITLE, weight: 600 });
  out += text(FULL.left - 44, 42, "each band to scale", { color: MUTED });
  out += text(FULL.left - 34, (FULL.top + FULL.bottom) / 2, `score / ${power(2, 32)}`, { size: TEXT, anchor: "middle", rotate: -90 });
  out += text((FULL.left + FULL.right) / 2, FULL.bottom + 30, "arrival counter", { size: TEXT, anchor: "middle", baseline: "hanging" });
  return out;
}

// The edge: the last REACH scores of tier `edge` and the first REACH of the next, on the number line
function edgeStrip(edge) {
  const at = (offset) => EDGE.middle + (offset + 0.5) * EDGE.step;
  const y = EDGE.dots;
  const top = power(2, 32);
  let out = line(40, 364, WIDTH - 40, 364, { stroke: "#d9d9d9" });
  out += text(40, 390, `the edge between tier ${edge} and tier ${edge + 1}: neighbours on the number line`,
    { size: TITLE, weight: 600 });
  out += line(at(-REACH) - 12, y, at(REACH - 1) + 12, y, { stroke: INK });
  out += line(EDGE.middle, y - 16, EDGE.middle, y + 16, { "stroke-dasharray": "4 3" });
  for (let offset = -REACH; offset < REACH; offset++) {
    const p = offset < 0 ? edge : edge + 1;
    out += circle(at(offset), y, 7, { fill: tierColor(p), stroke: INK, "stroke-width": 1 });
    out += text(at(offset), y + 13, offset < 0 ? `−${-offset}` : String(offset), { anchor: "middle", baseline: "hanging" });
  }
  out += text(at(-REACH) - 20, y, `tier ${edge}: counters ${top} − ${REACH} … ${top} − 1`, { anchor: "end", baseline: "middle" });
  out += text(at(REACH - 1) + 20, y, `tier ${edge + 1}: counters 0 … ${REACH - 1}`, { baseline: "middle" });
  out += text(EDGE.middle, y + 32, `score − ${edge + 1} × ${top}`, { size: TEXT, anchor: "middle", baseline: "hanging" });
  const last = priorityScore(edge, COUNTER_MASK);
  out += text(EDGE.middle, y + 54, `largest tier-${edge} score ${thousands(last)}, smallest tier-${edge + 1} score `
    + `${thousands(last + 1n)}: one apart`, { size: TEXT, anchor: "middle", baseline: "hanging" });
  return out;
}

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from.
// `ids` prefixes the hatch patterns' ids (the page gives each drawing its own)
export function still(state, ids = "emq-bands") {
  const points = (state.points || []).map(([p, c]) => [Number(p), Number(c)]);
  const tiers = Math.max(drawnTiers(state), ...points.map(([p]) => p));
  let defs = "";
  for (let p = 2; p <= tiers; p += 2) defs += bandPattern(`${ids}-${p}`, p);
  const body = `<defs>${defs}</defs>` + closeUp(points, tiers, ids) + fullScale(points, tiers, ids)
    + `<g class="emq-edge">${edgeStrip(Number(state.edge) || 1)}</g>`;
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

const NAMES = ["tiers", "jobs", "start", "edge", "points", "counts", "ran", "status"];
const RUN = ["tiers", "jobs", "start"]; // the values a refill on Redis reads
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));
// the kernel's line: a refusal or an error is shown as one, anything else as a note
const kindOf = (line) => (/^(refused|error)/.test(line || "") ? "bad" : "note");

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-bands";
  const ids = uid("emq-bands");
  const status = statusLine();
  let heard = false; // a kernel answered once
  let running = false;
  let again = false;

  const readouts = () => controls.forEach((control) => control.update());
  // Refill on Redis with the values now shown: one run at a time, the last values always run
  async function run() {
    if (running) {
      again = true;
      return;
    }
    const ran = model.get("ran") || {};
    if (RUN.every((name) => model.get(name) === ran[name])) return;
    running = true;
    try {
      if (!heard) {
        status.show("asking the kernel…");
        heard = await askKernel(model);
      }
      if (!heard) {
        for (const name of RUN) if (name in ran) model.set(name, ran[name]);
        readouts();
        status.show(`Refilling the queue on Redis ${NEEDS_KERNEL}.`, "bad");
        return;
      }
      status.show("running on Redis…");
      root.setAttribute("aria-busy", "true");
      send(model);
      // the kernel answers in order: its pong comes after the refill's values (or its refusal)
      const answered = await askKernel(model, ANSWER_WAIT);
      if (answered) status.show(model.get("status"), kindOf(model.get("status")));
      else status.show("the kernel did not answer in two minutes", "bad");
    } finally {
      running = false;
      root.removeAttribute("aria-busy");
      readouts();
      if (again) {
        again = false;
        run();
      }
    }
  }
  const onRedis = (name, label, extra = {}) => {
    const control = slider(model, { name, label, min: LIMITS[name][0], max: LIMITS[name][1], ...extra });
    control.input.addEventListener("change", run); // let go (or a key): not on every input
    return control;
  };
  const tiers = onRedis("tiers", "tiers");
  const jobs = onRedis("jobs", "jobs", { step: 10 });
  const start = onRedis("start", "pc starts at");
  const exact = numberBox(model, { name: "start", label: "exact pc start", min: LIMITS.start[0], max: LIMITS.start[1],
    onInput: () => {
      start.update();
      run();
    },
    onRefuse: (message) => status.show(message, "bad") });
  const edge = slider(model, { name: "edge", label: "edge after tier", min: LIMITS.edge[0], max: LIMITS.edge[1] });
  const controls = [tiers, jobs, start, exact, edge];
  const hint = document.createElement("div");
  hint.className = "emq-status emq-note";
  hint.setAttribute("aria-live", "off"); // a hint that never changes: nothing to read out again
  hint.textContent = "tiers, jobs and pc starts at refill the demo queue on Redis when let go; the edge moves here";
  const { figure, caption, numbers: counts } = figureBlock();
  root.append(tiers.row, jobs.row, start.row, exact.row, hint, status.line, edge.row, figure, caption, counts);
  el.append(css, root);

  function drawFigure() {
    const state = stateOf(model);
    figure.innerHTML = still(state, ids);
    caption.say(describe(state));
    counts.textContent = countsText(state);
  }
  // the edge alone: thousands of job dots are left as they are, so a key press fits in a frame
  function drawEdge() {
    const state = stateOf(model);
    const svg = figure.querySelector("svg");
    const group = svg && svg.querySelector("g.emq-edge");
    if (!group) return drawFigure();
    group.innerHTML = edgeStrip(Number(state.edge) || 1);
    const described = describe(state);
    svg.setAttribute("aria-label", described);
    svg.querySelector("title").textContent = described;
    caption.say(described);
  }
  function drawStatus() {
    if (!running) status.show(model.get("status"), kindOf(model.get("status")));
  }
  const listeners = [["change:points", drawFigure], ["change:counts", drawFigure], ["change:edge", drawEdge],
    ["change:status", drawStatus], ...[...RUN, "edge"].map((name) => [`change:${name}`, readouts])];
  const stop = listen(model, listeners);
  drawFigure();
  drawStatus();
  return stop;
}

export default { render };
