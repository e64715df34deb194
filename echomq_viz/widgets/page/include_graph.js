// Notebook 08's include graph: which scripts reach one Lua include, read from lua/ by the kernel
// once and drawn here. Picking another include in the menu redraws in the page; the kernel hears
// nothing of it (the graph is data, and nothing here needs Redis).

import { INK, MUTED, SMALL, TEXT, GRID, TIER_BITS_COLOR, VIEW_CSS, svgDocument, rect, path, text } from "./visual.js";
import { statusLine, listen, changes, figureWithMenu, menuPlace } from "./controls.js";

const WIDTH = 840;
const MARGIN = 10;
const CHAR_W = 8.1; // a bold 12 px DejaVu Sans letter at its widest, about: boxes fit their longest label
const BOX_H = 26;
const ROW = 32;
const TOP = 78; // below the menu and the legend
const REACHES = TIER_BITS_COLOR;
const ELSEWHERE = "#8a8a8a"; // a grey border, 3.4:1 on white: a shape's edge, not text

const isInclude = (name) => name.startsWith("includes/");
const short = (name) => name.replace(/^includes\//, "");

// Every file that includes `target`, directly or through other includes (lua_loader.includers_of)
export function includersOf(target, graph) {
  const found = new Set();
  let reached = new Set([target]);
  while (reached.size) {
    const next = new Set();
    for (const [node, targets] of Object.entries(graph)) {
      if (!found.has(node) && targets.some((t) => reached.has(t))) next.add(node);
    }
    for (const node of next) found.add(node);
    reached = next;
  }
  return found;
}

function scriptsOf(graph) {
  return Object.keys(graph).filter((n) => !isInclude(n)).sort();
}

const scriptsText = (count, verb, verbForOne) => (count === 1 ? `1 script ${verbForOne}` : `${count} scripts ${verb}`);

// The figure's text alternative (widgets.paths.IncludeGraphView.describe says the same)
export function describe(state) {
  const { graph, target } = state;
  const reaching = includersOf(target, graph);
  const scripts = [...reaching].filter((n) => !isInclude(n));
  const between = [...reaching].filter(isInclude).map(short).sort().join(", ");
  const direct = scripts.filter((n) => graph[n].includes(target)).length;
  const how = !between ? "directly" : !direct ? `through ${between}` : `directly or through ${between}`;
  const others = scriptsOf(graph).length - scripts.length;
  return `The include graph of lua/, scripts at the left, ${target} at the right: `
    + `${scriptsText(scripts.length, "reach", "reaches")} it, in colour, ${how}; `
    + `${scriptsText(others, "do", "does")} not, in grey.`;
}

// The two lines under the figure (IncludeGraphView.listing_text)
export function listing(state) {
  const { graph, target } = state;
  const reaching = includersOf(target, graph);
  const scripts = scriptsOf(graph).filter((n) => reaching.has(n));
  const others = scriptsOf(graph).filter((n) => !reaching.has(n));
  return `${scripts.length} scripts reach ${target}: ${scripts.join(", ")}\nnot: ${others.join(", ") || "none"}`;
}

// Columns: the scripts at the left, then the includes by how far they lie from the target
// (the longest include chain down to it), the target at the right. Empty depths are skipped.
export function layout(state) {
  const { graph, target } = state;
  const reaching = includersOf(target, graph);
  const depth = { [target]: 0 };
  for (let changed = true; changed;) { // relax until stable: the loader refuses include cycles
    changed = false;
    for (const node of reaching) {
      const reached = graph[node].filter((t) => t in depth).map((t) => depth[t] + 1);
      if (reached.length && Math.max(...reached) > (depth[node] ?? -1)) {
        depth[node] = Math.max(...reached);
        changed = true;
      }
    }
  }
  const includes = [...reaching].filter(isInclude).sort();
  const levels = [...new Set(includes.map((n) => depth[n]))].sort((a, b) => b - a);
  const columns = [scriptsOf(graph), ...levels.map((d) => includes.filter((n) => depth[n] === d)), [target]];
  const tallest = Math.max(...columns.map((c) => c.length));
  const widths = columns.map((nodes) => 18 + CHAR_W * Math.max(...nodes.map((n) => short(n).length)));
  const gap = columns.length > 1 ? (WIDTH - 2 * MARGIN - widths.reduce((a, b) => a + b)) / (columns.length - 1) : 0;
  const where = {};
  let x = MARGIN;
  columns.forEach((nodes, i) => {
    const top = TOP + ((tallest - nodes.length) * ROW) / 2;
    nodes.forEach((node, j) => { where[node] = { x, y: top + j * ROW, w: widths[i] }; });
    x += widths[i] + gap;
  });
  return { where, reaching, height: TOP + tallest * ROW + 8 };
}

// A curved arrow from the includer's right edge to the include's left edge
function link(a, b) {
  const [x1, y1, x2, y2] = [a.x + a.w, a.y + BOX_H / 2, b.x - 2, b.y + BOX_H / 2];
  const bend = (x2 - x1) / 2;
  const head = `M${x2 - 7},${y2 - 4} L${x2},${y2} L${x2 - 7},${y2 + 4}`;
  return path(`M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`, { stroke: REACHES, "stroke-width": 1.4 })
    + path(head, { stroke: REACHES, "stroke-width": 1.4, "stroke-linejoin": "round" });
}

// on a path: filled, a thick edge, white bold text; elsewhere: white, a dashed grey edge, muted text
function box(node, { x, y, w }, onPath) {
  const label = short(node);
  if (!onPath) {
    return rect(x, y, w, BOX_H, { rx: 6, fill: "#ffffff", stroke: ELSEWHERE, "stroke-dasharray": "4 3" })
      + text(x + w / 2, y + BOX_H / 2, label, { color: MUTED, anchor: "middle", baseline: "central" });
  }
  return rect(x, y, w, BOX_H, { rx: 6, fill: REACHES, stroke: INK, "stroke-width": 2 })
    + text(x + w / 2, y + BOX_H / 2, label, { color: "#ffffff", anchor: "middle", baseline: "central", weight: 700 })
      .replace("<text", `<text data-on="${REACHES}"`);
}

// The menu as the still shows it: its current choice in a box, as the page's select shows it
function drawnMenu(target) {
  const label = `include: ${short(target)} ▾`;
  return rect(MARGIN, 8, 330, 28, { rx: 4, fill: "#ffffff", stroke: INK })
    + text(MARGIN + 10, 22, label, { size: TEXT, baseline: "central" });
}

// The figure as SVG text: what the page shows (its menu a real select over the drawn one), and
// what a stored notebook's still is made from
export function still(state) {
  const { graph, target } = state;
  const { where, reaching, height } = layout(state);
  let body = drawnMenu(target);
  body += text(360, 22, "left: the scripts; right: the include; arrows: \"includes\"", { size: TEXT, baseline: "central" });
  body += rect(MARGIN, 48, 22, 14, { rx: 3, fill: REACHES, stroke: INK, "stroke-width": 2 })
    + text(MARGIN + 30, 55, "reaches it (thick edge)", { size: SMALL, baseline: "central" })
    + rect(210, 48, 22, 14, { rx: 3, fill: "#ffffff", stroke: ELSEWHERE, "stroke-dasharray": "4 3" })
    + text(240, 55, "does not (dashed, grey)", { size: SMALL, color: MUTED, baseline: "central" });
  body += path(`M${MARGIN},${TOP - 8} H${WIDTH - MARGIN}`, { stroke: GRID });
  for (const [node, targets] of Object.entries(graph)) {
    if (!reaching.has(node)) continue;
    for (const include of targets) if (where[include]) body += link(where[node], where[include]);
  }
  for (const [node, at] of Object.entries(where)) body += box(node, at, node === target || reaching.has(node));
  return svgDocument(WIDTH, height, describe(state), body);
}

const NAMES = ["graph", "targets", "target", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = `${VIEW_CSS}
.emq-graph .emq-figure { position: relative; container-type: inline-size; }
.emq-graph select.emq-menu { ${menuPlace({ x: MARGIN, y: 8, w: 330, h: 28 }, WIDTH)} font-family: inherit;
  border: 1px solid ${INK}; border-radius: 4px; background: #fff; color: ${INK}; }`;
  const root = document.createElement("div");
  root.className = "emq-view emq-graph";
  const { figure, drawing, caption, numbers: list, fill } = figureWithMenu("include", (target) => {
    model.set("target", target); // the page's business alone: nothing is sent
    draw();
  });
  const status = statusLine();
  root.append(figure, caption, list, status.line);
  el.append(css, root);

  function draw() {
    const state = stateOf(model);
    fill(state.targets.map((t) => [t, `include: ${short(t)}`]), state.target);
    drawing.innerHTML = still(state);
    caption.say(describe(state));
    list.textContent = listing(state);
    status.show(state.status, state.status ? "bad" : "note");
  }
  const stop = listen(model, changes(NAMES, draw));
  draw();
  return stop;
}

export default { render };
