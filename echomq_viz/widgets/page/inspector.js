// Notebook 06's inspector: a real queue read by the kernel (read commands only), drawn here.
// The kernel sends `queue_map` (widgets.inspector.queue_map): the tiers present as decimal text,
// jobs per tier, the counter ranges (two where the axis breaks), pc's counter and at most 3,000
// points [row, counter, id, kind]; and `summary`, the report's text. The URL, prefix and queue
// typed here reach the kernel only with the Inspect button; the kernel checks them before it
// connects. Nothing here writes to Redis, and neither does the kernel.

import { INK, MUTED, GRID, BAD, TEXT, TITLE, VIEW_CSS, svgDocument, rect, line, text, path, tierColor, esc } from "./visual.js";
import { TIER_SPAN, thousands, power } from "./score.js";
import { uid, send, statusLine, askKernel, NEEDS_KERNEL, listen, figureBlock, hold } from "./controls.js";

export const WIDTH = 840;
const LEFT = 132; // room for "tier 2²¹ + 999"
const RIGHT = 822;
const GAP = 16; // between the two panels of a broken axis
const FIRST_SHARE = 0.62;
const JOB = 0;
const PAST_LIMIT = 1;
const AHEAD = 2;
const ANSWER_WAIT = 600000; // ms: a read of a million jobs on a loaded machine
const LIMIT_TEXT = `${power(2, 21)} − 1`;
const KINDS = [
  [JOB, "job"],
  [PAST_LIMIT, `priority past ${LIMIT_TEXT}: score rounded`],
  [AHEAD, "counter above pc's: overtaken after the wrap"],
];

// "tier 3", "tier 2²¹", "tier 2²¹ + 5", "tier 70,000" (figures.queue_plots.tier_name)
export function tierName(tier) {
  const t = BigInt(tier);
  const bits = (t > 1n ? t : 1n).toString(2).length;
  const high = 1n << BigInt(bits - 1);
  if (t >= 65536n && t - high < 1000n) {
    return `tier ${power(2, bits - 1)}` + (t > high ? ` + ${thousands(t - high)}` : "");
  }
  return `tier ${thousands(t)}`;
}

// "40", or near the top of the range "2³² − 500" (figures.queue_plots.counter_name)
export function counterName(counter) {
  const c = BigInt(Math.round(Number(counter)));
  return TIER_SPAN - c <= 1000000n ? `${power(2, 32)} − ${thousands(TIER_SPAN - c)}` : thousands(c);
}

const read = (state) => (state.queue_map && state.queue_map.rows ? state.queue_map : null);

// The figure's text alternative (widgets.inspector.describe_map says the same)
export function describe(state) {
  const rows = "The queue's jobs, one row per tier present, the arrival counter across";
  const data = read(state);
  if (!data) return `${rows}, empty: nothing read yet.`;
  const counts = data.rows.map((t, i) => `${tierName(t)}: ${thousands(data.counts[i])}`).join(", ");
  const sent = data.points.length;
  const drawn = sent === data.placed ? `${thousands(data.placed)} jobs drawn`
    : `a sample of ${thousands(sent)} of its ${thousands(data.placed)} jobs drawn, jobs per tier`;
  const hidden = data.left_out ? `; ${thousands(data.left_out)} with an infinite score, not drawn.` : ".";
  return `${rows}, for ${data.queue}, ${drawn}: ${counts || "none"}${hidden}`;
}

// The lines under the map: what was drawn, and what the axis does
export function notes(state) {
  const data = read(state);
  if (!data) return ["nothing read yet: press Inspect (read-only)"];
  const tiers = `${thousands(data.rows.length)} tier${data.rows.length === 1 ? "" : "s"}`;
  const sent = data.points.length;
  let first = sent === data.placed ? `${thousands(data.placed)} jobs in ${tiers}, all drawn`
    : `a sample of ${thousands(sent)} of ${thousands(data.placed)} jobs in ${tiers}: each tier's first, `
      + "the flagged ones, the rest evenly spaced";
  if (data.equal) first += ` (${thousands(data.equal)} on top of another: equal scores)`;
  if (data.left_out) first += `; ${thousands(data.left_out)} with an infinite score not placed`;
  const more = [];
  if (data.ranges.length === 2) more.push("the counter axis breaks between its two clusters");
  if (data.pc_counter !== null && data.pc_counter !== undefined) more.push(`dashed: pc's counter, ${counterName(data.pc_counter)}`);
  return more.length ? [first, more.join("; ")] : [first];
}

// Rows whose tier colour an earlier row already has (tier 2 and tier 2²¹): drawn hatched
export function hatchedRows(rows) {
  const seen = new Set();
  return rows.map((t) => {
    const colour = tierColor(t);
    const again = seen.has(colour);
    seen.add(colour);
    return again;
  });
}

function marker(kind, x, y, fill, title) {
  const style = `fill="${fill}" stroke="${INK}" stroke-width="1"`;
  const tip = `<title>${esc(title)}</title>`;
  const r = (v) => Math.round(v * 10) / 10;
  if (kind === PAST_LIMIT) return `<rect x="${r(x - 5.5)}" y="${r(y - 5.5)}" width="11" height="11" ${style}>${tip}</rect>`;
  if (kind === AHEAD) {
    return `<path d="M${r(x)},${r(y - 6.5)} L${r(x + 6.5)},${r(y + 5)} L${r(x - 6.5)},${r(y + 5)} Z" ${style}>${tip}</path>`;
  }
  return `<circle cx="${r(x)}" cy="${r(y)}" r="5" ${style}>${tip}</circle>`;
}

function hatch(id, colour) {
  return `<pattern id="${id}" patternUnits="userSpaceOnUse" width="4" height="4" patternTransform="rotate(45)">`
    + `<rect width="4" height="4" fill="#ffffff"/><rect width="2" height="4" fill="${colour}"/></pattern>`;
}

// The legend: only what the map draws (no shape for a kind no job has), flowing onto a second line
function legend(kinds, hatched, y, ids) {
  const items = KINDS.filter(([kind]) => kinds.has(kind));
  if (hatched) items.push(["hatched", "hatched: a tier whose colour a row above has"]);
  let out = "";
  let x = LEFT;
  for (const [kind, label] of items) {
    const width = 22 + label.length * 6.9;
    if (x + width > RIGHT && x > LEFT) {
      x = LEFT;
      y += 20;
    }
    out += kind === "hatched" ? rect(x, y - 5.5, 11, 11, { fill: `url(#${ids}-legend)`, stroke: INK })
      : marker(kind, x + 5, y, "#ffffff", label);
    out += text(x + 16, y, label, { baseline: "central" });
    x += width + 18;
  }
  return [out, y];
}

// The controls as the still shows them; in the page, real ones stand above the figure instead
function drawnControls(state, y) {
  const field = (x, label, value, width) => text(x, y + 12, label, { size: TEXT, baseline: "central" })
    + rect(x + label.length * 7.6 + 6, y, width, 24, { fill: "#ffffff", stroke: MUTED })
    + text(x + label.length * 7.6 + 12, y + 12, value, { size: TEXT, baseline: "central" });
  let out = field(10, "prefix", state.prefix || "", 70) + field(150, "queue", state.queue || "", 300);
  out += rect(500, y, 170, 24, { rx: 4, fill: "#ffffff", stroke: INK });
  out += text(585, y + 12, "Inspect (read-only)", { size: TEXT, anchor: "middle", baseline: "central" });
  if (read(state)) out += text(680, y + 12, progressText(state.progress), { baseline: "central" });
  return [out, y + 36];
}

// "read 47 jobs", or while reading "read 3,000 of 100,000 jobs"
export function progressText([done, total] = [0, 0]) {
  return Number(done) >= Number(total) ? `read ${thousands(done)} jobs` : `read ${thousands(done)} of ${thousands(total)} jobs`;
}

function ticksFor(lo, hi, values, count) {
  if (values.length <= 2) return values;
  const ticks = [lo, hi];
  if (count === 3) ticks.splice(1, 0, Math.round((lo + hi) / 2));
  return ticks;
}

// The figure as SVG text: what the page shows (with { controls: false }: its own controls stand
// above) and, with the controls drawn, what a stored notebook's still is made from
// `ids` prefixes the hatch patterns' ids (the page gives each drawing its own)
export function still(state, { controls = true, ids = "emq-inspector" } = {}) {
  const data = read(state);
  let body = "";
  let y = 10;
  if (controls) [body, y] = drawnControls(state, y);
  const points = data ? data.points : [];
  const rows = data ? data.rows : [];
  const hatched = hatchedRows(rows);
  const kinds = new Set(points.map((p) => p[3]));
  const [keys, lastY] = legend(kinds, hatched.some(Boolean), y + 8, ids);
  body += `<defs>${hatch(`${ids}-legend`, MUTED)}`
    + rows.map((t, i) => (hatched[i] ? hatch(`${ids}-h${i}`, tierColor(t)) : "")).join("") + "</defs>";
  body += keys;
  const top = lastY + 22;
  const rowHeight = rows.length <= 12 ? 30 : Math.max(4, Math.min(30, 360 / rows.length));
  const bottom = top + Math.max(rows.length, 1) * rowHeight;
  const ranges = data && data.ranges.length ? data.ranges : [[0, 1]];
  const broken = ranges.length === 2;
  const span = RIGHT - LEFT;
  const frames = broken ? [[LEFT, LEFT + span * FIRST_SHARE], [LEFT + span * FIRST_SHARE + GAP, RIGHT]] : [[LEFT, RIGHT]];
  // every row labelled where they fit, else every k-th
  const every = Math.ceil(16 / rowHeight);
  rows.forEach((t, i) => {
    const cy = top + (i + 0.5) * rowHeight;
    body += line(LEFT, cy, RIGHT, cy, { stroke: GRID, "stroke-width": 1 });
    if (i % every === 0) body += text(LEFT - 10, cy, tierName(t), { anchor: "end", baseline: "central" });
  });
  const counters = points.map((p) => Number(p[1]));
  frames.forEach(([x0, x1], panel) => {
    const [lo, hi] = ranges[panel];
    const pad = Math.max((hi - lo) * 0.06, 1);
    const x = (c) => x0 + ((c - (lo - pad)) / (hi - lo + 2 * pad)) * (x1 - x0);
    body += line(x0, bottom, x1, bottom, { "stroke-width": 1 });
    if (panel === 0) body += line(x0, top, x0, bottom, { "stroke-width": 1 });
    if (!broken) body += line(x1, top, x1, bottom, { "stroke-width": 1 });
    if (broken) { // the cut: a slash where the axis stops and where it resumes
      const at = panel === 0 ? x1 : x0;
      body += line(at - 5, bottom + 6, at + 5, bottom - 6, { "stroke-width": 1.5 });
    }
    if (data) {
      const values = [...new Set(counters.filter((c) => c >= lo && c <= hi))].sort((a, b) => a - b);
      for (const v of ticksFor(lo, hi, values, panel === 0 ? 3 : 2)) {
        body += line(x(v), bottom, x(v), bottom + 5);
        body += text(x(v), bottom + 8, counterName(v), { anchor: "middle", baseline: "hanging" });
      }
      const pc = data.pc_counter;
      if (pc !== null && pc !== undefined && pc >= lo - pad && pc <= hi + pad) {
        body += line(x(pc), top, x(pc), bottom, { stroke: BAD, "stroke-width": 1.5, "stroke-dasharray": "5 3" });
        body += text(x(pc), top - 4, "pc", { color: BAD, anchor: "middle" });
      }
      for (const [row, counter, id, kind] of points) {
        if (counter < lo || counter > hi) continue;
        const fill = hatched[row] ? `url(#${ids}-h${row})` : tierColor(rows[row]);
        body += marker(kind, x(counter), top + (row + 0.5) * rowHeight, fill,
          `job ${id} · ${tierName(rows[row])} · counter ${counterName(counter)}`);
      }
    }
  });
  if (!data) {
    body += text((LEFT + RIGHT) / 2, (top + bottom) / 2, "nothing read yet", { size: TITLE, color: MUTED, anchor: "middle", baseline: "central" });
  }
  body += text((LEFT + RIGHT) / 2, bottom + 30, "arrival counter (the low 32 bits)", { size: TEXT, anchor: "middle", baseline: "hanging" });
  let at = bottom + 56;
  for (const note of notes(state)) {
    body += text(10, at, note, { baseline: "hanging" });
    at += 18;
  }
  return svgDocument(WIDTH, at + 6, describe(state), body);
}

const NAMES = ["url", "url_enabled", "url_placeholder", "prefix", "queue", "progress", "queue_map", "summary", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));
const kindOf = (line) => (/^(refused|error)/.test(line || "") ? "bad" : "note");

function field(model, name, label, placeholder) {
  const id = uid(`emq-${name}`);
  const row = document.createElement("div");
  row.className = "emq-row";
  row.innerHTML = `<label class="emq-name" for="${id}">${esc(label)}</label>`
    + `<input type="text" id="${id}" spellcheck="false" data-lm-suppress-shortcuts="true">`;
  const input = row.querySelector("input");
  input.placeholder = placeholder;
  input.value = model.get(name);
  input.addEventListener("change", () => model.set(name, input.value)); // sent with Inspect, not before
  input.addEventListener("keydown", (event) => event.stopPropagation());
  return { row, input, update: () => { if (document.activeElement !== input) input.value = model.get(name); } };
}

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = `${VIEW_CSS}
.emq-inspector input[type=text] { font: 13px ui-monospace, monospace; width: 420px; max-width: 60vw; }
.emq-inspector progress { width: 200px; }`;
  const root = document.createElement("div");
  root.className = "emq-view emq-inspector";
  const url = field(model, "url", "Redis URL", model.get("url_placeholder"));
  url.input.disabled = !model.get("url_enabled");
  const prefix = field(model, "prefix", "prefix", "emq");
  const queue = field(model, "queue", "queue", "{orders}");
  const fields = [url, prefix, queue];
  const buttons = document.createElement("div");
  buttons.className = "emq-row";
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Inspect (read-only)";
  const bar = document.createElement("progress");
  bar.setAttribute("aria-label", "jobs read");
  const barText = document.createElement("span");
  barText.className = "emq-note";
  buttons.append(button, bar, barText);
  const status = statusLine();
  const { figure, caption } = figureBlock();
  const summary = document.createElement("div");
  summary.className = "emq-readout";
  root.append(url.row, prefix.row, queue.row, buttons, status.line, figure, caption, summary);
  el.append(css, root);

  let running = false;
  async function inspect() {
    if (running) return;
    running = true;
    hold(button, true);
    root.setAttribute("aria-busy", "true");
    try {
      for (const f of fields) if (!f.input.disabled) model.set(f === url ? "url" : f === prefix ? "prefix" : "queue", f.input.value);
      status.show("asking the kernel…");
      if (!(await askKernel(model))) {
        status.show(`Inspect ${NEEDS_KERNEL}.`, "bad");
        return;
      }
      status.show("reading on Redis (read commands only)…");
      send(model); // the names typed, which the kernel checks before it connects
      model.send({ kind: "inspect" });
      // the kernel answers in order: its pong comes after the read (or its refusal)
      if (await askKernel(model, ANSWER_WAIT)) status.show(model.get("status"), kindOf(model.get("status")));
      else status.show("the kernel did not answer in ten minutes", "bad");
    } finally {
      running = false;
      hold(button, false);
      root.removeAttribute("aria-busy");
    }
  }
  button.addEventListener("click", inspect);
  button.addEventListener("keydown", (event) => event.stopPropagation());
  queue.input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") inspect();
  });

  function drawProgress() {
    const [done, total] = model.get("progress") || [0, 0];
    bar.max = Math.max(Number(total), 1);
    bar.value = Number(done);
    barText.textContent = total || model.get("queue_map").rows ? progressText([done, total]) : "";
  }
  const ids = uid("emq-inspector");
  function draw() {
    const state = stateOf(model);
    figure.innerHTML = still(state, { controls: false, ids });
    caption.say(describe(state));
    summary.textContent = state.summary;
    fields.forEach((f) => f.update());
  }
  function drawStatus() {
    if (!running) status.show(model.get("status"), kindOf(model.get("status")));
  }
  const listeners = [["change:queue_map", draw], ["change:summary", draw], ["change:progress", drawProgress],
    ["change:status", drawStatus], ["change:prefix", draw], ["change:queue", draw], ["change:url", draw]];
  const stop = listen(model, listeners);
  draw();
  drawProgress();
  drawStatus();
  return stop;
}

export default { render };
