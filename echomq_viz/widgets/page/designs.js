// Notebook 09's designs that fail: the same jobs popped by the real scripts and by one wrong design.
// The reader chooses a design; the kernel runs both on Redis and sends the two pop orders, the
// table of stored scores and the design's Lua, which the page draws. Nothing here computes an order.

import { INK, MUTED, TITLE, TEXT, SMALL, BAD, GRID, VIEW_CSS, svgDocument, rect, line, text, tierColor, textColorOn,
  esc } from "./visual.js";
import { statusLine, askKernel, NEEDS_KERNEL, listen, changes, figureBlock, hold } from "./controls.js";

const WIDTH = 820;
const HEIGHT = 262;
const SLOTS = 10; // the longest scenario's jobs
const LEFT = 10;
const SLOT = (WIDTH - 2 * LEFT) / SLOTS;
const BOX = { w: SLOT - 8, h: 44 };
const TOP_ROW = 60;
const LOW_ROW = 158;

// The figure's text alternative (widgets.designs.DesignsView.describe says the same)
export function describe(state) {
  const o = state.outcome;
  if (!o || !o.scenario) return "No design chosen yet: two empty queue strips wait for one to run on Redis.";
  const same = o.right_order.join(" ") === o.design_order.join(" ");
  return `Two pop orders of the same ${o.jobs.length} jobs (${o.title}), first out at the left. `
    + `The real scripts pop ${o.right_order.join(" ")}; the wrong design, ${o.design}, pops ${o.design_order.join(" ")}: `
    + (same ? "the same order." : "a different order.");
}

// How many jobs the design pops at another place than the real scripts
export function outOfPlace(outcome) {
  return outcome.design_order.filter((id, i) => outcome.right_order[i] !== id).length;
}

// text on a fill says which (data-on): its contrast is checked against the fill, not the white ground
const onFill = (fill, svgText) => svgText.replace("<text", `<text data-on="${fill}"`);

function jobBox(x, y, id, priority) {
  const fill = tierColor(priority);
  const ink = textColorOn(fill);
  return rect(x, y, BOX.w, BOX.h, { fill, stroke: INK, "stroke-width": 1 })
    + onFill(fill, text(x + BOX.w / 2, y + 17, `job ${id}`, { size: TEXT, color: ink, anchor: "middle", weight: 600 }))
    + onFill(fill, text(x + BOX.w / 2, y + 34, `p${priority}`, { size: SMALL, color: ink, anchor: "middle" }));
}

function emptyBoxes(y) {
  let out = "";
  for (let i = 0; i < SLOTS; i++) {
    out += rect(LEFT + i * SLOT + 4, y, BOX.w, BOX.h, { fill: "#ffffff", stroke: GRID, "stroke-dasharray": "4 3" });
  }
  return out;
}

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from
export function still(state) {
  const o = state.outcome;
  const xOf = (i) => LEFT + i * SLOT + 4;
  if (!o || !o.scenario) {
    let body = text(LEFT, 24, "Which order will a wrong design pop? Choose one above: it runs on Redis.",
      { size: TITLE, weight: 600 });
    body += text(LEFT, TOP_ROW - 8, "the real scripts pop (first out at the left)", { size: TEXT, color: MUTED });
    body += emptyBoxes(TOP_ROW) + emptyBoxes(LOW_ROW);
    body += text(LEFT, LOW_ROW + BOX.h + 20, "the wrong design pops: no design chosen yet", { size: TEXT, color: MUTED });
    return svgDocument(WIDTH, HEIGHT, describe(state), body);
  }
  const priority = Object.fromEntries(o.jobs.map(([id, , p]) => [id, p]));
  const moved = outOfPlace(o);
  let body = text(LEFT, 24, moved ? `${o.title}: ${moved} of ${o.jobs.length} jobs pop out of place`
    : `${o.title}: the same order this time`, { size: TITLE, weight: 600 });
  body += text(LEFT, TOP_ROW - 8, "the real scripts pop (first out at the left)", { size: TEXT });
  // a line from each job's place in the right order to its place in the design's: dashed and red when moved
  o.design_order.forEach((id, i) => {
    const from = o.right_order.indexOf(id);
    const away = from !== i;
    body += line(xOf(from) + BOX.w / 2, TOP_ROW + BOX.h, xOf(i) + BOX.w / 2, LOW_ROW,
      { stroke: away ? BAD : "#999999", "stroke-width": away ? 2 : 1, "stroke-dasharray": away ? "5 3" : null });
  });
  o.right_order.forEach((id, i) => { body += jobBox(xOf(i), TOP_ROW, id, priority[id]); });
  o.design_order.forEach((id, i) => { body += jobBox(xOf(i), LOW_ROW, id, priority[id]); });
  const verdict = moved ? "a different order (dashed: moved)" : "the same order";
  body += text(LEFT, LOW_ROW + BOX.h + 20, `the wrong design pops: ${verdict}`, { size: TEXT, color: moved ? BAD : INK });
  body += text(LEFT, LOW_ROW + BOX.h + 40, `design: ${o.design} (lua/designs/${o.file})`, { size: SMALL, color: MUTED });
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

const CSS = `
.emq-designs .emq-choices { display: flex; flex-wrap: wrap; gap: 6px; margin: 4px 0 8px 0; }
.emq-designs button[aria-pressed=true] { background: #1f5fa8; color: #fff; border: 1px solid #1f5fa8; }
.emq-designs button[aria-pressed=false] { background: #fff; color: #1a1a1a; border: 1px solid #767676; }
.emq-designs pre { font-size: 12px; white-space: pre-wrap; margin: 4px 0; }
.emq-designs details summary { font-size: 13px; cursor: pointer; }
`;

const NAMES = ["scenario", "choices", "outcome", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS + CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-designs";
  const status = statusLine();
  const choices = document.createElement("div");
  choices.className = "emq-choices";
  choices.setAttribute("role", "group");
  choices.setAttribute("aria-label", "design");
  const again = document.createElement("button");
  again.textContent = "Run again on Redis";
  const { figure, caption } = figureBlock();
  const why = document.createElement("div");
  why.className = "emq-why";
  const table = document.createElement("pre");
  const lua = document.createElement("div");
  let waiting = false;

  const busy = (on) => {
    waiting = on;
    for (const button of [...choices.querySelectorAll("button"), again]) hold(button, on); // choose() waits
  };
  async function ask(message) {
    busy(true);
    status.show("running on Redis…");
    if (!(await askKernel(model))) {
      busy(false);
      status.show(`Running a design on Redis ${NEEDS_KERNEL}.`, "bad");
      return;
    }
    message();
  }
  // a choice is a request to the kernel: it checks the key, runs both on Redis and sends what they did
  function choose(key) {
    if (waiting) return;
    ask(() => {
      model.set("scenario", key);
      draw();
      model.send({ kind: "run", scenario: key });
    });
  }
  again.addEventListener("click", () => choose(model.get("scenario")));
  // the arrow keys move between the design buttons, as in a toolbar
  choices.addEventListener("keydown", (event) => {
    const buttons = [...choices.querySelectorAll("button")];
    const at = buttons.indexOf(document.activeElement);
    if (at < 0 || !["ArrowLeft", "ArrowRight"].includes(event.key)) return;
    event.preventDefault();
    event.stopPropagation();
    buttons[(at + (event.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length].focus();
  });
  root.append(choices, again, figure, caption, why, table, lua, status.line);
  el.append(css, root);

  function draw() {
    const state = stateOf(model);
    if (choices.childElementCount !== state.choices.length) {
      choices.replaceChildren(...state.choices.map(([key, label]) => {
        const button = document.createElement("button");
        button.textContent = label;
        button.dataset.key = key;
        button.setAttribute("data-lm-suppress-shortcuts", "true");
        button.addEventListener("click", () => choose(key));
        return button;
      }));
    }
    for (const button of choices.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.dataset.key === state.scenario));
    }
    again.hidden = !state.scenario;
    figure.innerHTML = still(state);
    caption.say(describe(state));
    const o = state.outcome;
    const shown = o && o.scenario && o.scenario === state.scenario;
    why.innerHTML = shown ? `<b>Why:</b> ${esc(o.reason)}` : "";
    table.textContent = shown ? o.table : "";
    table.hidden = !shown;
    lua.innerHTML = shown ? `<details open><summary>the design's Lua: <code>lua/designs/${esc(o.file)}</code></summary>`
      + `<pre>${esc(o.lua)}</pre></details>` : "";
    if (state.status) status.show(state.status, "bad");
  }
  // the kernel says when a run it was asked for is over, whether or not anything changed
  const done = (message) => {
    if (!message || message.kind !== "done") return;
    busy(false);
    status.show("");
    draw();
  };
  const stop = listen(model, [...changes(NAMES, draw), ["msg:custom", done]]);
  draw();
  return stop;
}

export default { render };
