// Notebook 09's exercise: three keys (tenant, priority, arrival) packed into one score.
// Whether the jobs fit a budget is arithmetic, done here with BigInt as the sliders move; the kernel
// hears only the run button, runs the budget through packThreeKeys.lua on Redis and sends back what
// Redis did.

import { INK, MUTED, TITLE, TEXT, SMALL, BAD, GOOD, TIER_BITS_COLOR, COUNTER_BITS_COLOR, VIEW_CSS, svgDocument,
  rect, line, text, textColorOn } from "./visual.js";
import { EXACT_LIMIT, thousands, power } from "./score.js";
import { slider, statusLine, askKernel, politeLine, NEEDS_KERNEL, listen, changes, whenChanged, figureBlock, hold } from "./controls.js";

const WIDTH = 820;
const HEIGHT = 262;
const EXACT_BITS = 53;
const CEILING = 64; // one double's bits: no budget asks for more, not even for teaching
const FIELDS = ["tenant", "priority", "arrival"];
const NAMES = ["tenant_bits", "priority_bits", "arrival_bits"];
const COLORS = ["#6b6b6b", TIER_BITS_COLOR, COUNTER_BITS_COLOR]; // figures.double_plots.FIELD_COLORS
const UNUSED = "#f2f2f2";
const X0 = 26;
const CELL = 12;
const BAR_Y = 84;
const BAR_H = 30;

export const widthsOf = (state) => NAMES.map((name) => Number(state[name]));
const bitLength = (n) => (BigInt(n) === 0n ? 0 : BigInt(n).toString(2).length);

// Each field: its width, the largest value it must hold (as the exercise states it, or a job's own
// where one goes past that), and whether that value fits
export function fields(state) {
  const widths = widthsOf(state);
  const ranges = state.ranges || [0, 0, 0];
  return FIELDS.map((name, i) => {
    const largest = state.jobs.reduce((top, job) => (BigInt(job[i + 1]) > top ? BigInt(job[i + 1]) : top),
      BigInt(ranges[i] || 0));
    return { name, width: widths[i], largest, fits: bitLength(largest) <= widths[i] };
  });
}

// The verdict on a budget (widgets.designs._verdict says the same)
export function verdict(state) {
  const narrow = fields(state).filter((f) => !f.fits);
  const total = widthsOf(state).reduce((a, b) => a + b, 0);
  if (narrow.length) {
    return narrow.map((f) => `${f.name} ${thousands(f.largest)} does not fit ${f.width} bits, `
      + `which hold 0..${thousands(2n ** BigInt(f.width) - 1n)}`).join("; ")
      + ": these jobs cannot be packed, give that key more bits";
  }
  return total <= EXACT_BITS ? "fits in 53 bits: check_budget accepts it"
    : `${total} bits: check_budget refuses it; run anyway, for teaching`;
}

// What the budget is for these jobs: the figure's title (widgets.designs.packing_state)
export function stateLine(state) {
  const widths = widthsOf(state);
  const total = widths.reduce((a, b) => a + b, 0);
  const over = total - EXACT_BITS;
  const narrow = fields(state).filter((f) => !f.fits).map((f) => f.name);
  const head = `${widths.join(" + ")} = ${total} bits: `;
  const past = `${over} past the ${EXACT_BITS} a double keeps exact`;
  const names = [narrow.slice(0, -1).join(", "), narrow[narrow.length - 1]].filter(Boolean).join(" and ");
  if (narrow.length) return `${head}too few for ${names}, nothing can be packed${over > 0 ? `; ${past}` : ""}`;
  if (over > 0) return `${head}${past}, so scores round`;
  return `${head}every job fits, every score exact`;
}

// The figure's text alternative (widgets.designs.PackingView.describe says the same)
export function describe(state) {
  const [t, p, a] = widthsOf(state);
  return `One score's 64 bits, bit 63 at the left, shared out as tenant ${t}, priority ${p} and arrival ${a} `
    + `bits (arrival lowest), with the largest key each field must hold: ${stateLine(state)}.`;
}

// The largest score the jobs pack to, exactly (null when a key does not fit its bits)
export function largestScore(state) {
  if (fields(state).some((f) => !f.fits)) return null;
  const [, p, a] = widthsOf(state).map(BigInt);
  return state.jobs.reduce((top, [, tenant, priority, arrival]) => {
    const score = (BigInt(tenant) << (p + a)) | (BigInt(priority) << a) | BigInt(arrival);
    return score > top ? score : top;
  }, 0n);
}

// The most a slider may take: 53, or what the other two leave of 64
export function maxFor(state, name) {
  const widths = widthsOf(state);
  const total = widths.reduce((x, y) => x + y, 0);
  return Math.min(EXACT_BITS, CEILING - (total - widths[NAMES.indexOf(name)]));
}

const onFill = (fill, svgText) => svgText.replace("<text", `<text data-on="${fill}"`);

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from
export function still(state) {
  const widths = widthsOf(state);
  const total = widths.reduce((a, b) => a + b, 0);
  const info = fields(state);
  const bad = info.some((f) => !f.fits) || total > EXACT_BITS;
  const [first, second] = stateLine(state).split("; ");
  let body = "<defs><pattern id=\"emq-past53\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
    + "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#ffffff\" stroke-width=\"2\"/>"
    + "</pattern></defs>";
  body += text(X0, 24, first, { size: TITLE, weight: 600, color: bad ? BAD : GOOD });
  if (second) body += text(X0, 44, second, { size: TEXT, color: BAD });
  // the bar: bit 63 at the left; the arrival takes the lowest bits, the tenant the highest used
  const cellX = (bit) => X0 + (63 - bit) * CELL;
  let low = 0;
  const spans = [];
  for (let i = 2; i >= 0; i--) {
    spans[i] = [low, low + widths[i] - 1];
    low += widths[i];
  }
  body += rect(X0, BAR_Y, 64 * CELL, BAR_H, { fill: UNUSED, stroke: "#bbbbbb" });
  spans.forEach(([lo, hi], i) => {
    if (hi < lo) return;
    const x = cellX(hi);
    const w = (hi - lo + 1) * CELL;
    body += rect(x, BAR_Y, w, BAR_H, { fill: COLORS[i], stroke: "#ffffff", "stroke-width": 1 });
    const label = `${FIELDS[i]} ${widths[i]}`;
    if (w >= label.length * 7.5 + 8) {
      body += onFill(COLORS[i], text(x + w / 2, BAR_Y + BAR_H / 2, label, { size: SMALL, color: textColorOn(COLORS[i]),
        anchor: "middle", baseline: "middle" }));
    }
  });
  if (total > EXACT_BITS) { // used bits past a double's 53 exact ones: red, and hatched so no colour is needed
    const x = cellX(total - 1);
    const w = (total - EXACT_BITS) * CELL;
    body += rect(x, BAR_Y, w, BAR_H, { fill: BAD }) + rect(x, BAR_Y, w, BAR_H, { fill: "url(#emq-past53)" });
  }
  const edge = X0 + (64 - EXACT_BITS) * CELL;
  body += line(edge, BAR_Y - 10, edge, BAR_Y + BAR_H + 6, { stroke: INK, "stroke-width": 2, "stroke-dasharray": "4 3" });
  body += text(edge - 6, BAR_Y - 8, `past ${power(2, 53)}`, { color: MUTED, anchor: "end" });
  body += text(edge + 6, BAR_Y - 8, "53 bits a double keeps exact", { color: MUTED });
  for (const bit of [63, 53, 0]) {
    body += text(cellX(bit) + CELL / 2, BAR_Y + BAR_H + 6, bit === 63 ? "bit 63" : String(bit),
      { anchor: bit === 63 ? "start" : "middle", baseline: "hanging" });
  }
  // each field: what it gets, the largest key it must hold, whether that fits
  info.forEach((f, i) => {
    const y = 162 + i * 20;
    body += rect(X0, y - 11, 12, 12, { fill: COLORS[i] });
    body += text(X0 + 20, y, f.name, { size: TEXT });
    body += text(X0 + 100, y, `gets ${f.width} bits: 0..${thousands(2n ** BigInt(f.width) - 1n)}`, { size: TEXT });
    body += text(X0 + 380, y, `largest key ${thousands(f.largest)}`, { size: TEXT }); // the bits it needs are the reader's to find
    body += text(X0 + 640, y, f.fits ? "fits" : "too few bits", { size: TEXT, weight: 600, color: f.fits ? GOOD : BAD });
  });
  const top = largestScore(state);
  const last = top === null ? "a key that does not fit its bits cannot be packed: no score to compute"
    : `largest packed score ${thousands(top)} ${top < EXACT_LIMIT ? "<" : "≥"} ${power(2, 53)}: `
      + (top < EXACT_LIMIT ? "exact as a double" : "rounded as a double");
  body += text(X0, 236, last, { size: TEXT, color: top !== null && top < EXACT_LIMIT ? INK : BAD });
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

// Redis's answer for the last run, and which budget it was for
export function redisLines(state) {
  const o = state.outcome;
  if (!o || !o.widths) return null;
  const same = o.widths.join(",") === widthsOf(state).join(",");
  return { head: `On Redis, packThreeKeys.lua with ${o.widths.join(" + ")} bits`
    + (same ? ":" : " (the last run; run again for this budget):"), text: o.text,
    good: o.order.join(" ") === o.right_order.join(" ") && o.rounded.length === 0 };
}

const CSS = `
.emq-packing pre { font-size: 12px; white-space: pre-wrap; margin: 4px 0; }
.emq-packing .emq-verdict { font-size: 13px; font-weight: 600; margin: 4px 0; }
`;
const ALL = [...NAMES, "jobs", "ranges", "run_enabled", "outcome", "status"];
const stateOf = (model) => Object.fromEntries(ALL.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS + CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-packing";
  const status = statusLine();
  // a drag redraws here and sends nothing: only the run button reaches the kernel
  const moved = () => {
    status.show("");
    draw();
  };
  const sliders = NAMES.map((name, i) => slider(model, { name, label: `${FIELDS[i]} bits`, min: 0, max: EXACT_BITS,
    onInput: moved }));
  const { figure, caption } = figureBlock();
  const verdictLine = document.createElement("div");
  verdictLine.className = "emq-verdict";
  const run = document.createElement("button");
  run.textContent = "Run this budget on Redis";
  run.setAttribute("data-lm-suppress-shortcuts", "true");
  const head = politeLine();
  const answer = document.createElement("pre");
  let waiting = false;
  run.addEventListener("click", async () => {
    if (waiting) return; // a run already asked for
    waiting = true;
    draw();
    status.show("running on Redis…");
    if (!(await askKernel(model))) {
      waiting = false;
      draw();
      status.show(`Running a budget on Redis ${NEEDS_KERNEL}.`, "bad");
      return;
    }
    model.send({ kind: "run", widths: widthsOf(stateOf(model)) });
  });
  root.append(...sliders.map((s) => s.row), figure, caption, verdictLine, run, head, answer, status.line);
  el.append(css, root);

  // drawn once a move, though a control's move arrives twice (controls.whenChanged)
  const paint = whenChanged(() => ({ ...stateOf(model), waiting }), (state) => {
    sliders.forEach((s, i) => {
      s.update();
      s.input.max = String(maxFor(state, NAMES[i]));
    });
    figure.innerHTML = still(state);
    caption.say(describe(state));
    const fitsAll = fields(state).every((f) => f.fits);
    verdictLine.textContent = verdict(state);
    verdictLine.style.color = !fitsAll ? BAD : widthsOf(state).reduce((a, b) => a + b, 0) > EXACT_BITS ? BAD : GOOD;
    run.disabled = !fitsAll || !state.run_enabled;
    hold(run, state.waiting);
    run.title = fitsAll ? "" : "give each key enough bits first";
    const ran = redisLines(state);
    head.textContent = ran ? ran.head : "";
    head.className = `emq-status emq-${ran ? (ran.good ? "good" : "bad") : "note"}`;
    answer.textContent = ran ? ran.text : "";
    answer.hidden = !ran;
  });
  function draw() {
    const state = paint();
    if (state.status) status.show(state.status, state.status.startsWith("nothing run") ? "note" : "bad");
  }
  const done = (message) => {
    if (!message || message.kind !== "done") return;
    waiting = false;
    status.show("");
    draw();
  };
  const stop = listen(model, [...changes(ALL, draw), ["msg:custom", done]]);
  draw();
  return stop;
}

export default { render };
