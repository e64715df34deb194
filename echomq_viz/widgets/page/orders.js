// Notebook 10's pop orders: one strip per queue library, the right order on top. The kernel ran
// every library once and sent each one's pop order, verdict and details with the jobs' tiers;
// choosing a library (the menu, or a click on its strip) redraws here and sends the kernel nothing.

import { INK, MUTED, TEXT, GRID, TIER_BITS_COLOR, VIEW_CSS, svgDocument, rect, text, tierColor, textColorOn } from "./visual.js";
import { statusLine, listen, changes, figureWithMenu, menuPlace } from "./controls.js";

const WIDTH = 840;
const MARGIN = 10;
const PER_LINE = 24; // boxes on one line of a strip; a longer order goes on over more lines
const SLOT = (WIDTH - 2 * MARGIN) / PER_LINE;
const BOX = { w: SLOT - 4, h: 36 };
const TITLE_H = 22; // a strip's title above its boxes
const LINE_H = BOX.h + 6;
const GAP = 14; // between two strips
const TOP = 50; // below the menu and the legend
const MENU = { x: MARGIN, y: 8, w: 330, h: 28 };
const DASHES = "5 3";

const sameOrder = (a, b) => a.length === b.length && a.every((name, i) => name === b[i]);
const chosenOf = (state) => state.libraries[state.library] || state.libraries[0];

// The figure's text alternative (peers.view.OrdersView.describe says the same)
export function describe(state) {
  const { libraries, right, tiers } = state;
  const wrong = libraries.filter((lib) => !sameOrder(lib.order, right)).map((lib) => lib.label);
  const verdict = !wrong.length ? "every library hands them out in the right order"
    : `${wrong.join(", ")} hand${wrong.length === 1 ? "s" : ""} them out in another order `
      + `(${wrong.length === 1 ? "its" : "their"} differing boxes are outlined with thick dashes)`;
  const tierCount = new Set(right.map((name) => tiers[name])).size;
  return `The same ${right.length} jobs in ${tierCount} tier${tierCount === 1 ? "" : "s"}, in the order each of `
    + `${libraries.length} libraries popped them, one strip per library under the right order; each box names `
    + `a job (its number is its arrival) and its tier; ${verdict}. Selected: ${chosenOf(state).label}.`;
}

// What is measured about the chosen library, as lines of text (peers.table.details, sent once)
export function detailsText(state) {
  return chosenOf(state).details;
}

// The strips' rows: [title, order, library index or -1 for the right order]
function rows(state) {
  return [["a correct priority queue: tier, then arrival", state.right, -1],
    ...state.libraries.map((lib, i) => [`${lib.label}: ${lib.verdict}`, lib.order, i])];
}

const linesOf = (order, right) => Math.max(1, Math.ceil(Math.max(order.length, right.length) / PER_LINE));
const rowHeight = (order, right) => TITLE_H + linesOf(order, right) * LINE_H;

// One strip at y: a box per job, tier-coloured and labelled; a box where the order is not the
// right one outlined with thick dashes; a job the order lacks an empty dashed slot
function strip(y, order, right, tiers, compare) {
  let out = "";
  const slots = compare ? Math.max(order.length, right.length) : order.length;
  for (let i = 0; i < slots; i++) {
    const x = MARGIN + (i % PER_LINE) * SLOT + 2;
    const top = y + Math.floor(i / PER_LINE) * LINE_H;
    if (i >= order.length) {
      out += rect(x, top, BOX.w, BOX.h, { fill: "#ffffff", stroke: GRID, "stroke-width": 3, "stroke-dasharray": DASHES });
      continue;
    }
    const name = order[i];
    const fill = tierColor(tiers[name]);
    const ink = textColorOn(fill);
    const wrong = compare && name !== right[i];
    const onFill = (svg) => svg.replace("<text", `<text data-on="${fill}"`);
    out += rect(x, top, BOX.w, BOX.h, { fill, stroke: INK, "stroke-width": wrong ? 3 : 1,
      "stroke-dasharray": wrong ? DASHES : null, "data-wrong": wrong ? "true" : null });
    out += onFill(text(x + BOX.w / 2, top + 12, name, { color: ink, anchor: "middle", baseline: "central" }));
    out += onFill(text(x + BOX.w / 2, top + 27, `t${tiers[name]}`, { color: ink, anchor: "middle", baseline: "central" }));
  }
  return out;
}

function drawnMenu(state) {
  return rect(MENU.x, MENU.y, MENU.w, MENU.h, { rx: 4, fill: "#ffffff", stroke: INK })
    + text(MENU.x + 10, MENU.y + MENU.h / 2, `library: ${chosenOf(state).label} ▾`, { size: TEXT, baseline: "central" });
}

// The figure as SVG text: what the page shows (its menu a real select over the drawn one), and
// what a stored notebook's still is made from
export function still(state) {
  const { right, tiers } = state;
  let body = drawnMenu(state);
  const legendX = MENU.x + MENU.w + 20;
  body += rect(legendX, 14, 22, 16, { fill: "#ffffff", stroke: INK, "stroke-width": 3, "stroke-dasharray": DASHES })
    + text(legendX + 30, 22, "not the job the right order has there", { baseline: "central" })
    + text(legendX + 30, 40, "tN: the job's tier (1 first); jN: its arrival", { color: MUTED, baseline: "central" });
  let y = TOP;
  for (const [title, order, index] of rows(state)) {
    const chosen = index === state.library;
    const height = rowHeight(order, right);
    body += `<g${index >= 0 ? ` data-library="${index}"` : ""}>`;
    if (index >= 0) { // the whole row takes a click, its gaps too; the chosen one framed
      body += rect(MARGIN / 2, y - 3, WIDTH - MARGIN, height + 2,
        { fill: "#ffffff", stroke: chosen ? TIER_BITS_COLOR : null, "stroke-width": chosen ? 2 : null, rx: 4 });
    }
    body += text(MARGIN, y + TITLE_H / 2, `${chosen ? "▶ " : ""}${title}`,
      { size: TEXT, weight: chosen ? 700 : 400, baseline: "central" });
    body += strip(y + TITLE_H, order, right, tiers, index >= 0);
    body += "</g>";
    y += height + GAP;
  }
  return svgDocument(WIDTH, y - GAP + 6, describe(state), body);
}

const NAMES = ["right", "tiers", "libraries", "library", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = `${VIEW_CSS}
.emq-orders .emq-figure { position: relative; container-type: inline-size; }
.emq-orders .emq-figure g[data-library] { cursor: pointer; }
.emq-orders select.emq-menu { ${menuPlace(MENU, WIDTH)} font-family: inherit; border: 1px solid ${INK};
  border-radius: 4px; background: #fff; color: ${INK}; }`;
  const root = document.createElement("div");
  root.className = "emq-view emq-orders";
  const choose = (index) => {
    model.set("library", index); // the page's business alone: nothing is sent
    draw();
  };
  const { figure, drawing, caption, numbers: details, fill } = figureWithMenu("library", (value) => choose(Number(value)));
  drawing.addEventListener("click", (event) => { // a click on a library's strip chooses it too
    const row = event.target.closest && event.target.closest("g[data-library]");
    if (row) choose(Number(row.getAttribute("data-library")));
  });
  const status = statusLine();
  root.append(figure, caption, details, status.line);
  el.append(css, root);

  function draw() {
    const state = stateOf(model);
    fill(state.libraries.map((lib, i) => [i, `library: ${lib.label}`]), state.library);
    drawing.innerHTML = still(state);
    caption.say(describe(state));
    details.textContent = detailsText(state);
    status.show(state.status, state.status ? "bad" : "note");
  }
  const stop = listen(model, changes(NAMES, draw));
  draw();
  return stop;
}

export default { render };
