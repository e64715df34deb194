// Notebook 01's hero: one score, two keys, on a staircase of tiers above the 64-bit strip.
// The page draws every move; the kernel hears of a move only while "live on Redis" is on.

import { INK, TITLE, TEXT, TIER_BITS_COLOR, COUNTER_BITS_COLOR, VIEW_CSS, svgDocument, rect, circle, text,
  arrow, scale, axes, bitCells, refillBitCells, bitStripMarks, partsBody, drawFigure, tierColor } from "./visual.js";
import { TIER_SPAN, COUNTER_MASK, priorityScore, storedScore, thousands, formatHex, bits64, power } from "./score.js";
import { slider, numberBox, checkbox, statusLine, coalesced, send, askKernel, politeLine, NEEDS_KERNEL, listen, changes, whenChanged, figureBlock } from "./controls.js";

const WIDTH = 800;
const HEIGHT = 400;

function tiersText(tiers) {
  return tiers === 1 ? "tier 1" : `tiers 1-${tiers}`;
}

// The figure's text alternative (widgets.hero.HeroView.describe says the same)
export function describe(state) {
  const { priority, counter, tiers } = state;
  return `Staircase of ${tiersText(tiers)}; the current job (priority ${thousands(priority)}, counter ${thousands(counter)}) `
    + `sits in tier ${thousands(priority)} at score ${thousands(priorityScore(priority, counter))}; `
    + "bits 32-52 hold the tier, bits 0-31 the counter.";
}

// The readout: the score in decimal, hex and bits (widgets.hero.score_text as text)
export function readout(state) {
  const { priority, counter } = state;
  const score = priorityScore(priority, counter);
  const hex = formatHex(score);
  const bits = bits64(score);
  const tier = (s) => `<b style="color:${TIER_BITS_COLOR}">${s}</b>`;
  const low = (s) => `<b style="color:${COUNTER_BITS_COLOR}">${s}</b>`;
  return `score = ${tier(thousands(priority))} × 0x100000000 + ${low(thousands(BigInt(counter) % TIER_SPAN))}\n`
    + `      = <b>${thousands(score)}</b>\n`
    + `      = 0x${tier(hex.slice(2, 10))}_${low(hex.slice(11))}\n`
    + `      = ${tier(bits.slice(0, 32))} ${low(bits.slice(32))}`;
}

// The figure in parts (visual.partsBody): the frame is the same for every position of a
// staircase, so a drag redraws only the bars, the dot and its arrow, and the bits
const frames = new Map();
const STRIP_Y = 330;
const STRIP = bitStripMarks(geometry(1).left, STRIP_Y, geometry(1).right - geometry(1).left);
function frame(tiers) {
  if (!frames.has(tiers)) {
    const { x, y, left } = geometry(tiers);
    const yTicks = [];
    for (let p = 1; p <= tiers + 1; p++) yTicks.push([p, String(p)]);
    const xTicks = [];
    for (let p = 1; p <= tiers; p++) xTicks.push([p, String(p)]);
    frames.set(tiers, text(left, 22, "each bar: one tier's whole counter range; the dot: this job", { size: TITLE, weight: 600 })
      + axes(x, y, { xTicks, yTicks, xLabel: "priority (lower runs first)", yLabel: `score / ${power(2, 32)}`, grid: true })
      + text(left + 8, 52, `arrow: the same counter one priority up, + ${power(2, 32)}`,
        { size: TEXT, color: TIER_BITS_COLOR, baseline: "hanging" }));
  }
  return frames.get(tiers);
}

function geometry(tiers) {
  const left = 78;
  const right = WIDTH - 20;
  return { left, right, x: scale(0.2, tiers + 0.8, left, right), y: scale(1 - 0.15, tiers + 1 + 0.35, 262, 44) };
}

export function parts(state) {
  const { priority, counter, tiers } = state;
  const { x, y, left, right } = geometry(tiers);
  const top = Number(COUNTER_MASK) / Number(TIER_SPAN);
  let bars = "";
  for (let p = 1; p <= tiers; p++) {
    const colour = tierColor(p);
    bars += rect(x(p - 0.32), y(p + top), x(p + 0.32) - x(p - 0.32), y(p) - y(p + top),
      // edged in grey ink: a pale tier's own colour (tier 3's sand) stood at 1.6:1 on white
      { fill: colour, "fill-opacity": p === priority ? 0.8 : 0.3, stroke: INK, "stroke-opacity": 0.55,
        "stroke-width": 1 });
  }
  const score = priorityScore(priority, counter);
  const bits = bits64(score);
  const level = Number(score) / Number(TIER_SPAN);
  const [dotX, dotY] = [x(priority), y(level)];
  let dot = "";
  if (priority + 1 <= tiers) {
    const [toX, toY] = [x(priority + 1), y(level + 1)];
    const length = Math.hypot(toX - dotX, toY - dotY);
    const [fromX, fromY] = [dotX + ((toX - dotX) * 10) / length, dotY + ((toY - dotY) * 10) / length];
    dot += arrow(fromX, fromY, toX, toY, { color: TIER_BITS_COLOR });
  }
  dot += circle(dotX, dotY, 7, { fill: "#ffffff", stroke: INK, "stroke-width": 2.5 });
  return [["frame", frame(tiers)], ["bars", bars], ["dot", dot], ["bits", bitCells(left, STRIP_Y, right - left, bits),
    (group) => refillBitCells(group, bits)],
    ["strip", STRIP]];
}

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from
export function still(state) {
  return svgDocument(WIDTH, HEIGHT, describe(state), partsBody(parts(state)));
}

// Redis's answer, marked against the page's own computation
function liveLine(state) {
  const answer = state.live_answer;
  if (!state.live || !answer || !answer.job_id) return ["", "note"];
  const computed = storedScore(answer.priority, answer.counter);
  const stored = Number(answer.stored);
  const same = stored === computed;
  const which = answer.priority === state.priority && answer.counter === state.counter
    ? "" : ` (for priority ${thousands(answer.priority)}, counter ${thousands(answer.counter)})`;
  return [`job ${answer.job_id} via addPrioritizedJob-9: Redis stored ${thousands(BigInt(answer.stored))}, `
    + `the page computed ${thousands(BigInt(computed))}: stored: ${same ? "equal" : "DIFFERENT"}${which}`, same ? "good" : "bad"];
}

const NAMES = ["priority", "counter", "tiers", "live", "live_enabled", "live_answer", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-hero";
  const status = statusLine();
  const noKernel = () => {
    model.set("live", false);
    draw();
    status.show(`Live on Redis ${NEEDS_KERNEL}.`, "bad");
  };
  const sync = coalesced(model);
  const moved = () => {
    status.show("");
    draw();
    sync.changed();
  };
  const priority = slider(model, { name: "priority", label: "priority", min: 1, max: "tiers", onInput: moved });
  const counter = slider(model, { name: "counter", label: "counter", min: 0, max: Number(COUNTER_MASK), onInput: moved });
  const exact = numberBox(model, { name: "counter", label: "exact counter", min: 0, max: Number(COUNTER_MASK), onInput: moved,
    onRefuse: (message) => status.show(message, "bad") });
  const numbers = document.createElement("div");
  numbers.className = "emq-readout";
  const { figure, caption } = figureBlock();
  const live = checkbox(model, { name: "live", label: "live on Redis: each change adds a job" });
  const answer = politeLine();
  live.input.addEventListener("change", async () => {
    const on = live.input.checked;
    model.set("live", on);
    status.show(on ? "asking the kernel…" : "");
    send(model);
    draw();
    if (on && !(await askKernel(model))) noKernel();
    else if (on) status.show("");
  });
  root.append(priority.row, counter.row, exact.row, numbers, figure, caption, live.row, answer, status.line);
  el.append(css, root);

  const paint = whenChanged(() => stateOf(model), (state) => {
    drawFigure(figure, WIDTH, HEIGHT, describe(state), parts(state));
    caption.say(describe(state));
    numbers.innerHTML = readout(state);
    priority.update();
    counter.update();
    exact.update();
    live.update();
    live.input.disabled = !state.live_enabled;
    const [line, kind] = state.live_enabled ? liveLine(state) : ["live on Redis: this view was made without a demo queue", "note"];
    answer.className = `emq-status emq-${kind}`;
    answer.textContent = line;
  });
  function draw() {
    const state = paint();
    if (state.status) status.show(state.status, "bad");
  }
  const stop = listen(model, changes(NAMES, draw));
  draw();
  return stop;
}

export default { render };
