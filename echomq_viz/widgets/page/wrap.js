// Notebook 05's wrap: jobs filed while pc passes 2^32. The page shows the counter parts the
// arithmetic gives from where pc starts; its button has the kernel file the jobs on Redis and
// drain them, and the page draws what Redis stored and the order it popped them in.

import { INK, MUTED, TITLE, TEXT, BAD, GOOD, VIEW_CSS, svgDocument, rect, line, text, tierColor, textColorOn } from "./visual.js";
import { TIER_SPAN, thousands, power } from "./score.js";
import { slider, numberBox, statusLine, kernelButton, listen, whenChanged, figureBlock } from "./controls.js";

const WIDTH = 800;
const HEIGHT = 350;
const WRAP_SPAN = Number(TIER_SPAN);

// near 2^32, as 2³² − 2 or 2³² + 3, so the wrap reads at a glance; else with commas
function near(n) {
  const off = n - WRAP_SPAN;
  if (Math.abs(off) <= 1000) return off === 0 ? power(2, 32) : `${power(2, 32)} ${off < 0 ? "−" : "+"} ${Math.abs(off)}`;
  return thousands(n);
}

function arrivals(state) {
  const out = [];
  for (let n = 0; n < state.jobs; n++) out.push({ incr: state.start + n + 1, counter: (state.start + n + 1) % WRAP_SPAN });
  return out;
}

// Redis's answer if it is for where pc starts now
function current(state) {
  const answer = state.answer || {};
  return answer.rows && answer.start === state.start ? answer : null;
}

// The figure's text alternative (widgets.frontier.WrapView.describe says the same)
export function describe(state) {
  const { start, jobs, job_priority: priority } = state;
  const parts = arrivals(state).map((a) => thousands(a.counter)).join(" ");
  const answer = current(state);
  if (!answer) {
    return `Arrival order and pop order of ${jobs} jobs at priority ${thousands(priority)}, pc from `
      + `${thousands(start)}: their counter parts will be ${parts}; not filed yet, the pop order empty.`;
  }
  const added = answer.rows.map((row) => row.job_id);
  const jumped = answer.popped.join(" ") !== added.join(" ") ? "newer jobs jumped ahead" : "first in, first out";
  return `Two strips of ${jobs} jobs at priority ${thousands(priority)}, pc from ${thousands(start)}: `
    + `arrival order ${added.join(" ")} with counter parts ${parts}; pop order ${answer.popped.join(" ")}: ${jumped}.`;
}

// The table of what Redis stored (widgets.frontier.WrapView.text)
export function table(state) {
  const answer = current(state);
  if (!answer) return "";
  const added = answer.rows.map((row) => row.job_id);
  const lines = [`${"job".padStart(4)}  ${"INCR pc".padStart(13)}  ${"counter part".padStart(12)}  ${"score".padStart(14)}`];
  for (const row of answer.rows) {
    lines.push(`${row.job_id.padStart(4)}  ${thousands(row.incr).padStart(13)}  ${thousands(row.counter).padStart(12)}  `
      + `${thousands(BigInt(row.score)).padStart(14)}`);
  }
  lines.push(`added:  ${added.join(" ")}`);
  lines.push(`popped: ${answer.popped.join(" ")}${answer.popped.join(" ") === added.join(" ") ? "" : "  <- newer jobs jumped ahead"}`);
  return lines.join("\n");
}

function box(x, y, w, h, lines, fill) {
  const on = fill ? textColorOn(fill) : INK;
  let out = rect(x, y, w, h, fill ? { fill, stroke: INK } : { fill: "#ffffff", stroke: "#999999", "stroke-dasharray": "4 3" });
  lines.forEach((words, i) => {
    out += text(x + w / 2, y + 16 + i * 16, words, { anchor: "middle", color: on, weight: i === 0 ? 600 : undefined })
      .replace("<text", fill ? `<text data-on="${fill}"` : "<text");
  });
  return out;
}

export function still(state) {
  const { start, jobs, job_priority: priority } = state;
  const answer = current(state);
  const [left, right] = [20, 780];
  const cell = Math.min(120, (right - left) / jobs);
  const fill = tierColor(priority);
  const byId = new Map((answer ? answer.rows : []).map((row) => [row.job_id, row]));
  let body = text(left, 24, `pc starts at ${thousands(start)} (${near(start)}): ${jobs} jobs at priority ${thousands(priority)}, `
    + "added one after another", { size: TITLE, weight: 600 });
  body += text(left, 56, `arrival order: INCR pc, then the counter part that enters the score, pc % ${power(2, 32)}`, { size: TEXT });
  arrivals(state).forEach((a, n) => {
    const row = answer ? answer.rows[n] : null;
    const name = row ? `job ${row.job_id}` : `arrival ${n + 1}`;
    body += box(left + n * cell + 2, 66, cell - 4, 56, [name, `pc ${near(a.incr)}`, `counter ${near(row ? row.counter : a.counter)}`], fill);
  });
  const wrapAt = arrivals(state).findIndex((a) => a.counter === 0);
  if (wrapAt > 0) {
    const xw = left + wrapAt * cell;
    body += line(xw, 62, xw, 130, { stroke: BAD, "stroke-width": 2.5, "stroke-dasharray": "5 3" });
    body += text(xw, 146, `pc passes ${power(2, 32)}: the counter part wraps to 0`, { color: BAD, anchor: "middle" });
  }
  body += text(left, 186, "pop order (moveToActive-11): the smallest score first", { size: TEXT });
  if (answer) {
    answer.popped.forEach((id, n) => {
      const row = byId.get(id);
      body += box(left + n * cell + 2, 196, cell - 4, 40, [`job ${id}`, `counter ${row ? near(row.counter) : "?"}`], fill);
    });
    const added = answer.rows.map((row) => row.job_id);
    const fifo = answer.popped.join(" ") === added.join(" ");
    const jumpers = answer.popped.slice(0, answer.popped.findIndex((id) => id === added[0]));
    body += text(left, 262, fifo ? "first in, first out: no counter part wrapped"
      : `newer jobs ${jumpers.join(" ")} jumped ahead of ${added.slice(0, added.length - jumpers.length).join(" ")}: `
        + "their counter parts start again at 0", { size: TEXT, color: fifo ? GOOD : BAD, weight: 600 });
  } else {
    for (let n = 0; n < jobs; n++) body += box(left + n * cell + 2, 196, cell - 4, 40, [], null);
    body += text((left + right) / 2, 262, `not filed yet: press “File ${jobs} jobs on Redis, then drain” to see the order Redis pops them in`,
      { size: TEXT, color: MUTED, anchor: "middle" });
  }
  body += text(left, 300, "each box: one job; the fill is its tier's colour, all in one tier, so only the counter part orders them",
    { color: MUTED });
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

const NAMES = ["start", "jobs", "job_priority", "redis_enabled", "answer", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-wrap";
  const status = statusLine();
  const moved = () => {
    status.show("");
    draw();
  };
  const [low, high] = [WRAP_SPAN - 10, WRAP_SPAN + 2];
  const start = slider(model, { name: "start", label: "pc starts at", min: low, max: high, onInput: moved });
  const exact = numberBox(model, { name: "start", label: "exact start", min: low, max: high, onInput: moved,
    onRefuse: (message) => status.show(message, "bad") });
  const button = kernelButton(model, { label: `File ${model.get("jobs")} jobs on Redis, then drain`,
    what: "Filing the jobs on Redis", status, message: () => ({ kind: "run", start: model.get("start") }) });
  const { figure, caption, numbers } = figureBlock();
  root.append(start.row, exact.row, button, figure, caption, numbers, status.line);
  el.append(css, root);

  // drawn once a move, though a control's move arrives twice (controls.whenChanged)
  const paint = whenChanged(() => stateOf(model), (state) => {
    figure.innerHTML = still(state);
    caption.say(describe(state));
    numbers.textContent = table(state);
    start.update();
    exact.update();
    button.disabled = !state.redis_enabled;
  });
  function draw() {
    const state = paint();
    if (state.status) status.show(state.status, "bad");
  }
  const answered = () => {
    status.show("");
    draw();
  };
  const stop = listen(model, NAMES.map((name) => [`change:${name}`, name === "answer" ? answered : draw]));
  draw();
  return stop;
}

export default { render };
