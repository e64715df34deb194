// Notebook 02's comparison: guess which of two jobs pops first, then see both scores and ask Redis.
// The page computes both scores (BigInt) and draws them; a drag sends the kernel nothing. The
// scores stay hidden until the reader guesses or deliberately chooses to look without guessing,
// and "Run it on Redis" opens only then: the kernel refuses a run before it too.

import { INK, MUTED, TITLE, TEXT, SMALL, MONO, GOOD, GRID, TIER_BITS_COLOR, COUNTER_BITS_COLOR, VIEW_CSS,
  svgDocument, rect, line, text, scale, axes } from "./visual.js";
import { TIER_SPAN, COUNTER_MASK, priorityScore, thousands, power } from "./score.js";
import { slider, numberBox, statusLine, send, uid, kernelButton, politeLine, listen, changes, figureBlock } from "./controls.js";

const WIDTH = 640;
const HEIGHT = 352;
const JOBS = ["A", "B"];
const SKIP = "skip"; // the guess of a reader who chose to see it without guessing

const jobOf = (state, name) => [state[`${name.toLowerCase()}_priority`], state[`${name.toLowerCase()}_counter`]];
const scoresOf = (state) => JOBS.map((name) => priorityScore(...jobOf(state, name)));
// "A", "B", or "" for equal scores
function firstOf(state) {
  const [a, b] = scoresOf(state);
  return a === b ? "" : a < b ? "A" : "B";
}

// The figure's text alternative (widgets.comparison.ComparisonView.describe says the same)
export function describe(state) {
  if (!state.guess) {
    const jobs = JOBS.map((name) => {
      const [p, c] = jobOf(state, name);
      return `job ${name} priority ${thousands(p)}, counter ${thousands(c)}`;
    }).join("; ");
    return `Two score bars, hidden until you guess which job pops first: ${jobs}.`;
  }
  const scores = scoresOf(state);
  const parts = JOBS.map((name, i) => {
    const [p, c] = jobOf(state, name);
    return `job ${name} (priority ${thousands(p)}, counter ${thousands(c)}) scores ${thousands(scores[i])}`;
  }).join("; ");
  const first = firstOf(state);
  const head = `Two stacked score bars, tier part below, counter part on top: ${parts}; `;
  return head + (first ? `${first}'s is smaller, so ${first} pops first.` : "equal scores, so Redis orders them by member.");
}

// The reader's guess, named and judged against the scores (widgets.comparison.guess_line)
export function guessLine(state) {
  const first = firstOf(state);
  if (!state.guess) return "";
  if (state.guess === SKIP) {
    return `You chose to see it without guessing: ${first ? `job ${first} pops first.` : "the scores are equal."}`;
  }
  if (!first) return `You guessed ${state.guess}: a tie — the scores are equal, so Redis orders them by member.`;
  return `You guessed ${state.guess}: ${state.guess === first ? "right" : "wrong"} — job ${first} pops first.`;
}

// Both composite scores, which is smaller and why; the guess named first once made
// (widgets.comparison.verdict_text, and ComparisonView.verdict_text for the guess)
export function verdict(state) {
  const [[pa, ca], [pb, cb]] = JOBS.map((name) => jobOf(state, name));
  const [sa, sb] = scoresOf(state);
  const row = (name, p, c, s) => `${name}: ${thousands(p)} × 0x100000000 + ${thousands(BigInt(c) % TIER_SPAN).padStart(13)}`
    + ` = ${thousands(s).padStart(16)}`;
  const lines = [row("A", pa, ca, sa), row("B", pb, cb, sb)];
  if (sa === sb) {
    lines.push("Equal scores: ZPOPMIN then orders by member, not by arrival.");
  } else {
    const first = sa < sb ? "A" : "B";
    lines.push(`${first} has the smaller score, so ZPOPMIN pops ${first} first.`);
    lines.push(pa !== pb
      ? `The tiers differ, so the high bits decide: one priority step is ${thousands(TIER_SPAN)},\n`
        + `more than any counter gap (at most ${thousands(COUNTER_MASK)}).`
      : "Same tier: the high bits tie and the low bits, the arrival counter, decide.");
  }
  const guess = guessLine(state);
  return (guess ? `${guess}\n` : "") + lines.join("\n");
}

// What Redis did on the last run, with the guess made then (widgets.comparison.redis_line)
export function redisLine(state) {
  const answer = state.redis_answer;
  if (!answer || !answer.popped) return "";
  const who = answer.guess === SKIP ? "You chose to see it without guessing"
    : `You guessed ${answer.guess}: ${answer.guess === answer.popped ? "right" : "wrong"}`;
  const jobs = (job) => `(${thousands(job[0])}, ${thousands(job[1])})`;
  const moved = JOBS.some((name, i) => {
    const [p, c] = jobOf(state, name);
    const ran = [answer.a, answer.b][i];
    return p !== ran[0] || c !== ran[1];
  });
  return `${who} — Redis popped job ${answer.popped} first (stored scores A ${thousands(BigInt(answer.score_a))}, `
    + `B ${thousands(BigInt(answer.score_b))})`
    + (moved ? `, for A ${jobs(answer.a)} and B ${jobs(answer.b)}: the jobs have moved since` : "");
}

// The figure as SVG text (figures.plots.draw_score_pair, drawn in the page): what the page shows,
// and what a stored notebook's still is made from. Before a guess the bars are empty slots.
export function still(state) {
  const [left, right, top, bottom] = [84, WIDTH - 24, 76, 300];
  const x = scale(-0.6, 1.6, left, right);
  const half = x(0.275) - x(0); // a bar is 0.55 wide, as draw_score_pair's
  const shown = Boolean(state.guess);
  const scores = scoresOf(state);
  const first = firstOf(state);
  const parts = JOBS.map((name) => {
    const [p, c] = jobOf(state, name);
    return [p, Number(BigInt(c) % TIER_SPAN) / Number(TIER_SPAN)];
  });
  const highest = Math.max(...parts.map(([p, f]) => p + f));
  const y = scale(0, shown ? highest * 1.25 + 0.5 : 1, bottom, top);
  let body;
  if (shown) {
    body = text(left - 60, 24, first ? `job ${first} has the smaller score: ZPOPMIN takes it first`
      : "equal scores: Redis falls back to member order", { size: TITLE, weight: 600 });
    let key = left;
    for (const [colour, label] of [[TIER_BITS_COLOR, `priority × ${power(2, 32)} (high bits)`],
      [COUNTER_BITS_COLOR, `counter mod ${power(2, 32)} (low bits)`]]) {
      body += rect(key, 42, 14, 14, { fill: colour }) + text(key + 20, 49, label, { size: TEXT, baseline: "middle" });
      key += 250;
    }
    const step = Math.max(1, Math.ceil(y.domain[1] / 8));
    const yTicks = [];
    for (let v = 0; v <= y.domain[1]; v += step) yTicks.push([v, String(v)]);
    body += axes(x, y, { yTicks, yLabel: `score / ${power(2, 32)}`, grid: true });
    parts.forEach(([p, f], i) => {
      const name = JOBS[i];
      body += rect(x(i) - half, y(p), 2 * half, y(0) - y(p), { fill: TIER_BITS_COLOR, "data-part": `tier ${name}` });
      body += rect(x(i) - half, y(p + f), 2 * half, y(p) - y(p + f), { fill: COUNTER_BITS_COLOR, "data-part": `counter ${name}` });
      body += text(x(i), y(p + f) - 6, thousands(scores[i]), { size: TEXT, anchor: "middle", family: MONO });
      if (name === first) body += text(x(i), y(p + f) - 26, "pops first", { size: TEXT, anchor: "middle", weight: 700, color: GOOD });
    });
  } else {
    body = text(left - 60, 24, "Which job pops first? Guess, and both scores appear.", { size: TITLE, weight: 600 });
    body += text(left - 60, 49, "The bars stay empty until you pick A or B (or choose to see them without guessing).",
      { size: TEXT, color: MUTED, baseline: "middle" });
    body += axes(x, y, { yLabel: `score / ${power(2, 32)}` });
    JOBS.forEach((name, i) => {
      body += rect(x(i) - half, top + 10, 2 * half, bottom - top - 10,
        { fill: "#ffffff", stroke: MUTED, "stroke-dasharray": "6 4", "data-part": `slot ${name}` });
      body += text(x(i), (top + bottom) / 2 + 5, "?", { size: 40, color: MUTED, anchor: "middle", baseline: "middle" });
    });
  }
  JOBS.forEach((name, i) => {
    const [p, c] = jobOf(state, name);
    body += line(x(i), bottom, x(i), bottom + 5, { stroke: INK });
    body += text(x(i), bottom + 9, `job ${name}`, { size: TEXT, anchor: "middle", baseline: "hanging", weight: 600 });
    body += text(x(i), bottom + 28, `priority ${thousands(p)}, counter ${thousands(c)}`,
      { size: SMALL, color: MUTED, anchor: "middle", baseline: "hanging" });
  });
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

const CSS = `
.emq-comparison fieldset { border: 1px solid ${GRID}; border-radius: 4px; margin: 4px 0; padding: 2px 10px; }
.emq-comparison legend { font-size: 13px; font-weight: 600; }
.emq-comparison label.emq-name { width: 140px; }
.emq-comparison button[aria-pressed=true] { background: ${TIER_BITS_COLOR}; color: #ffffff; font-weight: 700;
  border: 2px solid ${INK}; }
.emq-comparison .emq-hint { font-size: 13px; color: ${MUTED}; }
`;

const NAMES = ["a_priority", "a_counter", "b_priority", "b_counter", "max_priority", "guess", "run_enabled",
  "redis_answer", "status"];
const stateOf = (model) => Object.fromEntries(NAMES.map((name) => [name, model.get(name)]));

function button(label, onClick, pressable = false) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = label;
  element.setAttribute("data-lm-suppress-shortcuts", "true");
  if (pressable) element.setAttribute("aria-pressed", "false");
  element.addEventListener("click", onClick);
  // Enter and Space belong to the button, not to the notebook's shortcuts
  element.addEventListener("keydown", (event) => event.stopPropagation());
  return element;
}

function render({ model, el }) {
  const css = document.createElement("style");
  css.textContent = VIEW_CSS + CSS;
  const root = document.createElement("div");
  root.className = "emq-view emq-comparison";
  const status = statusLine();
  let note = ["", "note"]; // the page's own line; the kernel's status, when it has one, comes first
  const say = (message, kind = "note") => {
    note = [message, kind];
    draw();
  };
  // a guess is about the pair it was made on: the first move after it asks anew (and tells the kernel once)
  const moved = () => {
    if (model.get("guess")) {
      model.set("guess", "");
      send(model);
    }
    say("");
  };
  const refused = (message) => say(message, "bad");
  const jobs = JOBS.map((name) => {
    const key = name.toLowerCase();
    const box = document.createElement("fieldset");
    box.innerHTML = `<legend>Job ${name}</legend>`;
    const priority = slider(model, { name: `${key}_priority`, label: `job ${name} priority`, min: 1, max: "max_priority",
      onInput: moved });
    const counter = slider(model, { name: `${key}_counter`, label: `job ${name} counter`, min: 0, max: Number(COUNTER_MASK),
      onInput: moved });
    const exact = numberBox(model, { name: `${key}_counter`, label: `job ${name} exact counter`, min: 0,
      max: Number(COUNTER_MASK), onInput: moved, onRefuse: refused });
    box.append(priority.row, counter.row, exact.row);
    return { box, controls: [priority, counter, exact] };
  });
  const guessed = (choice) => () => {
    model.set("guess", choice);
    send(model); // a click, not a drag: the kernel learns the guess (and the jobs it was made on)
    say("");
  };
  const guessRow = document.createElement("div");
  guessRow.className = "emq-row";
  guessRow.setAttribute("role", "group");
  const guessId = uid("emq-guess");
  guessRow.setAttribute("aria-labelledby", guessId);
  guessRow.innerHTML = `<span class="emq-name" id="${guessId}">Your guess:</span>`;
  const choices = { A: button("A pops first", guessed("A"), true), B: button("B pops first", guessed("B"), true) };
  const skip = button("Show me without guessing", guessed(SKIP));
  guessRow.append(choices.A, choices.B, skip);
  const { figure, caption } = figureBlock();
  const explanation = document.createElement("div");
  explanation.className = "emq-readout";
  // the jobs and guess the page shows go with the run: the kernel checks them before it writes
  const run = kernelButton(model, { label: "Run it on Redis", what: "Run it on Redis", status: { show: say },
    until: "ran", onSettle: () => draw(), message: () => {
      const state = stateOf(model);
      return { kind: "run", a: jobOf(state, "A"), b: jobOf(state, "B"), guess: state.guess };
    } });
  const hint = document.createElement("span");
  hint.className = "emq-hint";
  const runRow = document.createElement("div");
  runRow.className = "emq-row";
  runRow.append(run, hint);
  const answer = politeLine();
  root.append(...jobs.map((job) => job.box), guessRow, figure, caption, explanation, runRow, answer, status.line);
  el.append(css, root);

  const heard = (message) => {
    if (message && message.kind === "ran") say("");
  };

  function draw() {
    const state = stateOf(model);
    figure.innerHTML = still(state);
    caption.say(describe(state));
    explanation.textContent = state.guess ? verdict(state) : "";
    for (const job of jobs) for (const control of job.controls) control.update();
    for (const [choice, element] of Object.entries(choices)) element.setAttribute("aria-pressed", String(state.guess === choice));
    run.disabled = !state.run_enabled || !state.guess; // no answer from Redis before a guess (a run held: kernelButton)
    hint.textContent = !state.run_enabled ? "this view was made without a demo queue"
      : state.guess ? "" : "opens once you guess (or choose to see it without guessing)";
    const said = redisLine(state);
    answer.className = `emq-status emq-${said.includes(": right —") ? "good" : "note"}`; // the words say it too
    answer.textContent = said;
    if (state.status) status.show(state.status, "bad");
    else status.show(...note);
  }
  const stop = listen(model, [...changes(NAMES, draw), ["msg:custom", heard]]);
  draw();
  return stop;
}

export default { render };
