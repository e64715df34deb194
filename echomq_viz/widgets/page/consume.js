// Notebook 03's consume dive: which job comes out first? The queue is drawn in arrival order (by job
// id), never in pop order, so nothing gives the answer away before the reader pops. The guess is
// the page's own until a button asks the kernel: Pop one, Drain and Fresh batch run the real scripts
// on Redis, and the kernel sends back the queue and the jobs popped, each with why.

import { INK, MUTED, TITLE, TEXT, GRID, WAIT_COLOR, VIEW_CSS, svgDocument, rect, text, tierColor, textColorOn,
  esc } from "./visual.js";
import { uid, send, statusLine, kernelButton, politeLine, listen, changes, figureBlock } from "./controls.js";

const WIDTH = 840;
const MARGIN = 10;
const PER_ROW = 13; // the notebook's batch of twelve and its wait-list job fill one row
const SLOT = (WIDTH - 2 * MARGIN) / PER_ROW;
const BOX = { w: SLOT - 8, h: 42 };
const ROW = BOX.h + 8;
const QUEUED = "queued, in arrival order (by job id), not the order they come out";
const POPPED = "popped by moveToActive-11, in the order it took them";

const label = (id, p) => `job ${id} (${p ? `priority ${Number(p).toLocaleString("en-US")}` : "wait list"})`;

// The jobs popped, in order (widgets.consume.popped_text)
export function poppedText(state) {
  return state.popped.map(([id, p]) => `${id}(${p ? `p${p}` : "wait"})`).join(" ") || "(nothing popped yet)";
}

// The figure's text alternative (widgets.consume.describe_state says the same)
export function describe(state) {
  const { queued, popped } = state;
  if (!popped.length) {
    const waiting = queued.filter(([, p]) => !p).length;
    return `Queue strip: ${queued.length} jobs in arrival order (by job id), not the order they come out: `
      + `${queued.length - waiting} in the sorted set, ${waiting} on the wait list. Popped strip: nothing popped yet.`;
  }
  const left = queued.length ? `${queued.length} jobs left, in arrival order` : "empty";
  const [id, p, why] = popped[popped.length - 1];
  return `Queue strip: ${left}. Popped strip: ${popped.length} popped, the last ${label(id, p)}, ${why}.`;
}

// The readout under the figure (ConsumeView.readout_text)
export function readout(state) {
  const pc = state.pc === null || state.pc === undefined
    ? "pc: deleted (the last consume found the wait list and the set empty)"
    : `pc = ${state.pc}`;
  return `popped: ${poppedText(state)}\n${pc}`;
}

// The guess judged against the first job out, "" before the first pop (widgets.consume.verdict_text)
export function verdict(state) {
  if (!state.popped.length) return "";
  const [first, , why] = state.popped[0];
  const out = `job ${first} came out first, ${why}.`;
  if (!state.guess) return `No guess made: ${out}`;
  return `You guessed job ${state.guess}: ${state.guess === first ? "right" : "not first"}. `
    + `${out[0].toUpperCase()}${out.slice(1)}`;
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

// `capacity` slots from y, PER_ROW a row, filled with `jobs` in the order given; `last` drawn thick
function strip(y, capacity, jobs, last) {
  let out = "";
  for (let i = 0; i < capacity; i++) {
    const x = MARGIN + (i % PER_ROW) * SLOT + 4;
    const top = y + Math.floor(i / PER_ROW) * ROW;
    if (i >= jobs.length) {
      out += rect(x, top, BOX.w, BOX.h, { fill: "#ffffff", stroke: GRID, "stroke-dasharray": "4 3" });
      continue;
    }
    const [id, p] = jobs[i];
    const fill = p ? tierColor(p) : WAIT_COLOR;
    const ink = textColorOn(fill);
    const bold = i === last;
    const onFill = (svg) => svg.replace("<text", `<text data-on="${fill}"`);
    out += rect(x, top, BOX.w, BOX.h, { fill, stroke: INK, "stroke-width": bold ? 4 : 1 });
    out += onFill(text(x + BOX.w / 2, top + 16, `job ${id}`, { color: ink, anchor: "middle", weight: bold ? 700 : 400 }));
    out += onFill(text(x + BOX.w / 2, top + 33, p ? `p${p}` : "wait", { color: ink, anchor: "middle" }));
  }
  return [out, y + Math.ceil(capacity / PER_ROW) * ROW];
}

// The controls as the still shows them: the question, the guess and the buttons. In the page, real
// controls stand there instead.
function drawnControls(state, y) {
  let out = text(MARGIN, y, "Which job comes out first? Pick your guess, then press Pop one.",
    { size: TEXT, baseline: "hanging" });
  y += 26;
  out += text(MARGIN, y + 12, "Your guess:", { size: TEXT, baseline: "central" });
  out += rect(MARGIN + 92, y, 110, 24, { rx: 3, fill: "#ffffff", stroke: INK });
  out += text(MARGIN + 100, y + 12, `${state.guess ? `job ${state.guess}` : "no guess"} ▾`, { size: TEXT, baseline: "central" });
  let x = MARGIN + 230;
  for (const name of ["Pop one", "Drain", "Fresh batch"]) {
    const w = 24 + name.length * 8;
    out += rect(x, y, w, 24, { rx: 4, fill: "#ffffff", stroke: INK });
    out += text(x + w / 2, y + 12, name, { size: TEXT, anchor: "middle", baseline: "central" });
    x += w + 10;
  }
  return [out, y + 38];
}

// The figure as SVG text: what the page shows (with { controls: false }: the page's own controls stand
// above it), and, with the controls drawn, what a stored notebook's still is made from
export function still(state, { controls = true } = {}) {
  let body = "";
  let y = 10;
  if (controls) [body, y] = drawnControls(state, y);
  body += text(MARGIN, y, QUEUED, { size: TITLE, weight: 600, baseline: "hanging" });
  let drawn;
  [drawn, y] = strip(y + 24, state.capacity, state.queued, -1);
  body += drawn;
  y += 14;
  body += text(MARGIN, y, POPPED, { size: TITLE, weight: 600, baseline: "hanging" });
  [drawn, y] = strip(y + 24, state.capacity, state.popped, state.popped.length - 1);
  body += drawn;
  y += 8;
  if (state.popped.length) {
    const [id, p, why] = state.popped[state.popped.length - 1];
    for (const words of wrap(`last out, drawn thick: ${label(id, p)}, ${why}`, 100)) {
      body += text(MARGIN, y, words, { size: TEXT, baseline: "hanging" });
      y += 18;
    }
  } else {
    body += text(MARGIN, y, "press Pop one: the job that comes out is drawn here, and why it came out then",
      { color: MUTED, baseline: "hanging" });
    y += 18;
  }
  return svgDocument(WIDTH, y + 6, describe(state), body);
}

const NAMES = ["capacity", "ids", "queued", "popped", "pc", "guess", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = `${VIEW_CSS}
.emq-consume .emq-question { font-size: 13px; margin: 4px 0; }
.emq-consume select { font-size: 13px; }`;
  const root = document.createElement("div");
  root.className = "emq-view emq-consume";
  const status = statusLine();
  let note = ["", "note"]; // the page's own line; the kernel's status, when it has one, comes first
  const say = (message, kind = "note") => {
    note = [message, kind];
    draw();
  };
  const question = document.createElement("div");
  question.className = "emq-question";
  question.textContent = "Which job comes out first? Pick your guess, then press Pop one.";
  const guessRow = document.createElement("div");
  guessRow.className = "emq-row";
  const id = uid("emq-guess");
  guessRow.innerHTML = `<label class="emq-name" for="${id}">Your guess:</label>`
    + `<select id="${id}" data-lm-suppress-shortcuts="true"></select>`;
  const menu = guessRow.querySelector("select");
  menu.addEventListener("keydown", (event) => event.stopPropagation()); // arrows move the guess
  menu.addEventListener("change", () => {
    model.set("guess", menu.value);
    send(model); // a choice, not a drag: the kernel checks it names a job of the batch
    say("");
  });
  const buttons = document.createElement("div");
  buttons.className = "emq-row";
  const ask = (label, kind) => kernelButton(model, { label, what: label, status: { show: say }, until: "done",
    message: () => ({ kind }) });
  // the reader's first act leads; a fresh batch, which only undoes it, comes last
  buttons.append(ask("Pop one", "pop"), ask("Drain", "drain"), ask("Fresh batch", "refill"));
  const { figure, caption, numbers } = figureBlock();
  const answer = politeLine();
  root.append(question, guessRow, buttons, figure, caption, answer, numbers, status.line);
  el.append(css, root);

  const heard = (message) => {
    if (message && message.kind === "done") say("");
  };

  function draw() {
    const state = stateOf(model);
    const options = [["", "no guess"], ...state.ids.map((job) => [job, `job ${job}`])];
    if (menu.options.length !== options.length) {
      menu.innerHTML = options.map(([value, shown]) => `<option value="${esc(value)}">${esc(shown)}</option>`).join("");
    }
    menu.value = state.guess || "";
    menu.disabled = state.popped.length > 0; // answered: a fresh batch asks again
    figure.innerHTML = still(state, { controls: false });
    caption.say(describe(state));
    const said = verdict(state);
    answer.className = `emq-status emq-${said.includes(": right.") ? "good" : "note"}`; // the words say it too
    answer.textContent = said;
    answer.hidden = !said; // no empty line under the caption before the first pop
    numbers.textContent = readout(state);
    if (state.status) status.show(state.status, "bad");
    else status.show(...note);
  }
  const stop = listen(model, [...changes(NAMES, draw), ["msg:custom", heard]]);
  draw();
  return stop;
}

export default { render };
