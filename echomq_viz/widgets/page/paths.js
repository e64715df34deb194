// Notebook 08's paths: guess where a job lands, then run its path on Redis. The guess is the
// page's own; the run button asks the kernel, which runs the real script from a fresh scene and
// sends back the queue before and after. The page draws both strips, the moved job in bold.

import { INK, MUTED, TITLE, TEXT, SMALL, GRID, WAIT_COLOR, VIEW_CSS, svgDocument, rect, text, tierColor, textColorOn,
  esc } from "./visual.js";
import { uid, send, statusLine, askKernel, NEEDS_KERNEL, listen, changes, figureBlock, hold, isHeld } from "./controls.js";

const WIDTH = 840;
const MARGIN = 10;
const SLOTS = 8; // the scene's seven jobs and one more
const SLOT = (WIDTH - 2 * MARGIN) / SLOTS;
const BOX = { w: SLOT - 8, h: 46 };
const ROW_GAP = 26; // under a strip: the moved job's mark

const queueText = (queue) => queue.map(([id, p]) => `${id} (${p ? `p${p}` : "wait"})`).join(", ") || "empty";

// Where a job went, as a sentence (widgets.paths._landed)
export function landed(jobId, landing) {
  if (landing === "where it was") return `job ${jobId} stayed where it was`;
  if (landing.endsWith("of its tier")) return `job ${jobId} landed at the ${landing}`;
  if (landing === "the wait list") return `job ${jobId} landed on the wait list`;
  return `job ${jobId} went to '${landing}'`;
}

const ran = (state) => Boolean(state.result && state.result.job_id);

// The figure's text alternative (widgets.paths.PathView.describe says the same)
export function describe(state) {
  if (!ran(state)) {
    return `Two queue strips, next out at the left. Before: ${queueText(state.scene)}. `
      + "After: empty until the path runs on Redis.";
  }
  const r = state.result;
  return `Two queue strips, next out at the left, job ${r.job_id} in bold. `
    + `Before: ${queueText(r.queue_before)}. After ${state.script}: `
    + `${queueText(r.queue_after)}; ${landed(r.job_id, r.landing)}.`;
}

// The readout under the figure (PathView.verdict_text)
export function verdictText(state) {
  if (!ran(state)) return "not run yet: press Run it on Redis";
  const { guess } = state;
  const verdict = guess === null || guess === undefined ? "no guess made"
    : `you guessed '${guess}': ${guess === state.result.landing ? "right" : "not what Redis did"}`;
  return `${state.result.text}\n${verdict}`;
}

// Words to lines of at most `width` characters
function wrap(words, width) {
  const lines = [""];
  for (const word of words.split(" ")) {
    const last = lines[lines.length - 1];
    if (last && last.length + 1 + word.length > width) lines.push(word);
    else lines[lines.length - 1] = last ? `${last} ${word}` : word;
  }
  return lines;
}

// One strip of job boxes at y, the moved job drawn thick, its id bold, and marked under its box
function strip(y, queue, moved) {
  let out = "";
  for (let i = 0; i < SLOTS; i++) {
    const x = MARGIN + i * SLOT + 4;
    if (i >= queue.length) {
      out += rect(x, y, BOX.w, BOX.h, { fill: "#ffffff", stroke: GRID, "stroke-dasharray": "4 3" });
      continue;
    }
    const [id, priority] = queue[i];
    const fill = priority ? tierColor(priority) : WAIT_COLOR;
    const ink = textColorOn(fill);
    const bold = id === moved;
    const onFill = (svg) => svg.replace("<text", `<text data-on="${fill}"`);
    out += rect(x, y, BOX.w, BOX.h, { fill, stroke: INK, "stroke-width": bold ? 4 : 1 });
    out += onFill(text(x + BOX.w / 2, y + 18, `job ${id}`, { size: bold ? TEXT : SMALL, color: ink, anchor: "middle",
      weight: bold ? 700 : 400 }));
    out += onFill(text(x + BOX.w / 2, y + 35, priority ? `p${priority}` : "wait", { color: ink, anchor: "middle" }));
    if (bold) out += text(x + BOX.w / 2, y + BOX.h + 6, `▲ job ${id}`, { anchor: "middle", baseline: "hanging", weight: 700 });
  }
  return out;
}

// The controls as the still shows them: the question, the guess's options (the chosen one filled
// and marked ●) and the run button. In the page, real controls stand there instead.
function drawnControls(state, y) {
  let out = "";
  for (const line of wrap(`${state.script}: ${state.question}`, 100)) {
    out += text(MARGIN, y, line, { size: TEXT, baseline: "hanging" });
    y += 18;
  }
  y += 6;
  out += text(MARGIN, y + 12, "Your guess:", { size: TEXT, baseline: "central" });
  let x = MARGIN + 92;
  for (const landing of state.landings) {
    const chosen = landing === state.guess;
    const w = 30 + landing.length * 7.4;
    out += rect(x, y, w, 24, { rx: 12, fill: chosen ? INK : "#ffffff", stroke: INK });
    out += text(x + 10, y + 12, `${chosen ? "●" : "○"} ${landing}`, { color: chosen ? "#ffffff" : INK, baseline: "central" })
      .replace("<text", `<text data-on="${chosen ? INK : "#ffffff"}"`);
    x += w + 8;
  }
  y += 32;
  out += rect(MARGIN, y, 150, 26, { rx: 4, fill: "#ffffff", stroke: INK });
  out += text(MARGIN + 75, y + 13, "▶ Run it on Redis", { size: TEXT, anchor: "middle", baseline: "central" });
  return [out, y + 40];
}

// The figure as SVG text: what the page shows (with { controls: false }: the page's own controls
// stand above it), and, with the controls drawn, what a stored notebook's still is made from
export function still(state, { controls = true } = {}) {
  let body = "";
  let y = 10;
  if (controls) [body, y] = drawnControls(state, y);
  const r = ran(state) ? state.result : null;
  const waiting = r && r.waiting ? ` (job ${r.job_id} waits in 'delayed')` : "";
  body += text(MARGIN, y, `before, next out at the left${waiting}`, { size: TITLE, weight: 600, baseline: "hanging" });
  body += strip(y + 24, r ? r.queue_before : state.scene, r ? r.job_id : null);
  y += 24 + BOX.h + ROW_GAP;
  body += text(MARGIN, y, r ? `after: ${landed(r.job_id, r.landing)}` : "after: press Run it on Redis",
    { size: TITLE, weight: 600, baseline: "hanging" });
  body += strip(y + 24, r ? r.queue_after : [], r ? r.job_id : null);
  y += 24 + BOX.h + ROW_GAP;
  if (r) {
    body += text(MARGIN, y, `job ${r.job_id} after: ${r.after}`, { size: TEXT, baseline: "hanging" });
    y += 22;
  } else {
    body += text(MARGIN, y, "the job that moves will be drawn thick, its id in bold, and marked ▲",
      { color: MUTED, baseline: "hanging" });
    y += 20;
  }
  return svgDocument(WIDTH, y, describe(state), body);
}

const NAMES = ["path", "script", "question", "landings", "scene", "guess", "result", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = `${VIEW_CSS}
.emq-paths fieldset { border: none; margin: 4px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 6px 14px; align-items: center; }
.emq-paths legend { float: left; font-size: 13px; margin-right: 8px; padding: 0; }
.emq-paths fieldset label { font-size: 13px; }
.emq-paths .emq-question { font-size: 13px; margin: 4px 0; }`;
  const root = document.createElement("div");
  root.className = "emq-view emq-paths";
  const question = document.createElement("div");
  question.className = "emq-question";
  const group = document.createElement("fieldset");
  const name = uid("emq-guess");
  group.innerHTML = `<legend>Your guess:</legend>` + model.get("landings").map((landing, i) => (
    `<label><input type="radio" name="${name}" id="${name}-${i}" value="${esc(landing)}" data-lm-suppress-shortcuts="true"> `
    + `${esc(landing)}</label>`)).join("");
  const radios = [...group.querySelectorAll("input")];
  for (const radio of radios) {
    radio.addEventListener("change", () => {
      model.set("guess", radio.value); // the page's own: it reaches the kernel with a run
      draw();
    });
    radio.addEventListener("keydown", (event) => event.stopPropagation()); // arrows move the guess
  }
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "▶ Run it on Redis";
  const { figure, caption } = figureBlock();
  const readout = document.createElement("div");
  readout.className = "emq-readout";
  const status = statusLine();
  root.append(question, group, button, figure, caption, readout, status.line);
  el.append(css, root);

  let waitFor = null; // the run the page waits for: ended by a result, a status line or a timeout
  const done = () => {
    if (waitFor) clearTimeout(waitFor);
    waitFor = null;
    hold(button, false);
  };
  button.addEventListener("click", async () => {
    if (isHeld(button)) return; // a run already asked for
    hold(button, true);
    status.show("running on Redis…");
    if (!(await askKernel(model))) {
      done();
      status.show(`Run it on Redis ${NEEDS_KERNEL}.`, "bad");
      return;
    }
    send(model); // the guess, if any, before the run
    waitFor = setTimeout(() => { done(); status.show("no answer from the kernel in 30 s", "bad"); }, 30000);
    model.send({ kind: "run" });
  });

  function draw() {
    const state = stateOf(model);
    question.innerHTML = `<b>${esc(state.script)}</b>: ${esc(state.question)}`;
    for (const radio of radios) radio.checked = radio.value === state.guess;
    figure.innerHTML = still(state, { controls: false });
    caption.say(describe(state));
    readout.textContent = verdictText(state);
  }
  const redraw = () => draw();
  const onResult = () => {
    if (waitFor) {
      done();
      status.show("");
    }
  };
  const onStatus = () => { // a refusal or an error ends the wait; an empty line, not while waiting
    const line = model.get("status");
    if (line) {
      done();
      status.show(line, "bad");
    } else if (!waitFor) status.show("");
  };
  const stop = listen(model, [...changes(NAMES, redraw), ["change:result", onResult], ["change:status", onStatus]]);
  const initial = model.get("status");
  if (initial) status.show(initial, "bad");
  draw();
  return stop;
}

export default { render };
