// The controls a view draws in the page, and the one rule for what reaches the kernel.
//
// A drag changes the page's model at once and redraws there; nothing is sent to the kernel
// unless the view is live on Redis. Live, the values go at most every `interval` ms, the
// last one always (a trailing send), so Redis is asked about four times a second while a
// drag lasts: each send costs the kernel about 5 ms of CPU (ipykernel's own 2.5 ms or so a
// message, then the lease, the counter, the add and the score on Redis), so a drag at 60
// moves a second costs it about a third of a millisecond a move. Without a kernel (a
// notebook just opened, an offline page) sending fails at once, or silently: askKernel
// tells, and the view says in one line that its Redis controls need the kernel.

import { esc } from "./visual.js";
import { thousands } from "./score.js";

let serial = 0;
export function uid(prefix) {
  serial += 1;
  return `${prefix}-${Date.now().toString(36)}-${serial}`;
}

// A value typed, as a refusal line quotes it: at most `width` characters (page_view.sent, in Python)
export function clipped(text, width = 40) {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

// An offline page (echomq-viz export writes its notice at the top) has no kernel to start: a Redis
// button there says where to run it instead
const OFFLINE = typeof document !== "undefined" && document.querySelector(".echomq-viz-snapshot") !== null;
export const NEEDS_KERNEL = OFFLINE
  ? "needs the notebook's kernel, which an offline page has not: open the notebook with echomq-viz lab"
  : "needs the notebook's kernel: run the notebook's cells first (in the app, reload the page)";

// Send the model's pending changes (nothing happens where no kernel listens)
export function send(model) {
  try {
    model.save_changes();
  } catch (error) {
    // a front end without a kernel may refuse instead of ignoring: the same, here
  }
}

// Whether a kernel answers this view: it answers {kind: "ping"} with {kind: "pong"}
// (page_view.PageFigure). A front end without a kernel drops the message, so silence
// for `wait` ms means no kernel.
export function askKernel(model, wait = 2000) {
  return new Promise((resolve) => {
    const heard = (message) => {
      if (message && message.kind === "pong") finish(true);
    };
    const timer = setTimeout(() => finish(false), wait);
    function finish(answer) {
      clearTimeout(timer);
      model.off("msg:custom", heard);
      resolve(answer);
    }
    model.on("msg:custom", heard);
    try {
      model.send({ kind: "ping" });
    } catch (error) {
      finish(false);
    }
  });
}

export function coalesced(model, interval = 250) {
  let last = -Infinity;
  let timer = null;
  const flush = () => {
    timer = null;
    last = performance.now();
    send(model);
  };
  return {
    // a value changed: send it if live, at most every `interval` ms, the last one always
    changed() {
      if (!model.get("live")) return;
      const wait = interval - (performance.now() - last);
      if (wait <= 0 && !timer) flush();
      else if (!timer) timer = setTimeout(flush, Math.max(0, wait));
    },
    flush() {
      if (timer) clearTimeout(timer);
      flush();
    },
  };
}

// A labelled range slider with a readout, bound to the model's `name`. min and max are numbers
// or names of the model's values (the kernel holds the bounds; the page only follows them).
export function slider(model, { name, label, min, max, step = 1, format = thousands, onInput }) {
  const bound = (v) => (typeof v === "string" ? Number(model.get(v)) : v);
  const id = uid(`emq-${name}`);
  const row = document.createElement("div");
  row.className = "emq-row";
  row.innerHTML = `<label class="emq-name" for="${id}">${esc(label)}</label>`
    + `<input type="range" id="${id}" aria-label="${esc(label)}" data-lm-suppress-shortcuts="true">`
    + `<output for="${id}" aria-hidden="true"></output>`;
  const input = row.querySelector("input");
  const output = row.querySelector("output");
  input.step = String(step);
  const update = () => {
    const [low, high] = [String(bound(min)), String(bound(max))];
    if (input.min !== low) input.min = low;
    if (input.max !== high) input.max = high;
    const value = Number(model.get(name));
    if (Number(input.value) !== value) input.value = String(value);
    const shown = format(value);
    if (output.textContent !== shown) {
      output.textContent = shown;
      input.setAttribute("aria-valuetext", shown); // exact: a range's own value is a double, 2^32 rounded
    }
  };
  input.addEventListener("input", () => {
    const value = Math.round(Number(input.value));
    model.set(name, value);
    if (onInput) onInput(value);
  });
  // Lab's notebook takes arrow keys for itself unless told not to; the attribute above tells it,
  // and the keys a range knows are kept from reaching the notebook's shortcuts
  input.addEventListener("keydown", (event) => event.stopPropagation());
  update();
  return { row, input, update };
}

// A whole-number box for an exact value (the counter has 2^32 values: a slider cannot land on each)
export function numberBox(model, { name, label, min, max, onInput, onRefuse }) {
  const bound = (v) => (typeof v === "string" ? Number(model.get(v)) : v);
  const id = uid(`emq-${name}-box`);
  const row = document.createElement("div");
  row.className = "emq-row";
  row.innerHTML = `<label class="emq-name" for="${id}">${esc(label)}</label>`
    + `<input type="number" id="${id}" aria-label="${esc(label)}" step="1" data-lm-suppress-shortcuts="true">`;
  const input = row.querySelector("input");
  // Only what the reader is typing, not yet taken (Enter or leaving the box takes it), is kept
  // from the model's changes; a value taken and then put back (refused, or with no kernel to
  // run it) shows at once, though the box still has the focus.
  let typing = false;
  const update = () => {
    const [low, high] = [String(bound(min)), String(bound(max))];
    if (input.min !== low) input.min = low;
    if (input.max !== high) input.max = high;
    if (!typing && input.value !== String(model.get(name))) input.value = String(model.get(name));
  };
  input.addEventListener("input", () => {
    typing = true;
  });
  input.addEventListener("blur", () => {
    typing = false;
    update();
  });
  input.addEventListener("change", () => {
    typing = false;
    const text = input.value.trim();
    const low = bound(min);
    const high = bound(max);
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < low || value > high) {
      onRefuse(`${label} must be a whole number in ${thousands(low)}..${thousands(high)}, got ${clipped(text) || "nothing"}`);
      input.value = String(model.get(name));
      return;
    }
    model.set(name, value);
    if (onInput) onInput(value);
  });
  input.addEventListener("keydown", (event) => event.stopPropagation());
  update();
  return { row, input, update };
}

// A checkbox bound to the model's boolean `name`
export function checkbox(model, { name, label }) {
  const id = uid(`emq-${name}`);
  const row = document.createElement("div");
  row.className = "emq-row";
  row.innerHTML = `<input type="checkbox" id="${id}" data-lm-suppress-shortcuts="true"><label for="${id}">${esc(label)}</label>`;
  const input = row.querySelector("input");
  const update = () => {
    input.checked = Boolean(model.get(name));
  };
  update();
  return { row, input, update };
}

// An element of a view: a tag with its class
export function element(tag, className) {
  const made = document.createElement(tag);
  made.className = className;
  return made;
}

// What every view draws into: its figure, the figure's caption (its text alternative, a polite live
// region that follows the state: caption.say(text)) and the readout under it
export function figureBlock() {
  const figure = element("div", "emq-figure");
  const caption = element("div", "emq-caption");
  caption.setAttribute("aria-live", "polite");
  caption.say = (described) => {
    caption.innerHTML = `<b>Figure:</b> ${esc(described)}`;
  };
  return { figure, caption, numbers: element("div", "emq-readout") };
}

// A figure whose menu the still draws and the page lays a real <select> over (the view's CSS
// places it), so the page and the still look the same; onPick(value) hears a choice, and
// fill([[value, text], ...], chosen) keeps the options and the choice in step with the model
export function figureWithMenu(label, onPick) {
  const block = figureBlock();
  const drawing = document.createElement("div");
  const menu = element("select", "emq-menu");
  menu.id = uid(`emq-${label}`);
  menu.setAttribute("aria-label", label);
  menu.dataset.lmSuppressShortcuts = "true";
  menu.addEventListener("keydown", (event) => event.stopPropagation()); // arrows pick, not the notebook's
  menu.addEventListener("change", () => onPick(menu.value));
  block.figure.append(drawing, menu);
  const fill = (options, chosen) => {
    if (menu.options.length !== options.length) {
      menu.innerHTML = options.map(([value, text]) => `<option value="${esc(value)}">${esc(text)}</option>`).join("");
    }
    menu.value = String(chosen);
  };
  return { ...block, drawing, menu, fill };
}

// Where figureWithMenu's <select> goes: over the menu `box` drawn in a figure `width` wide, in
// hundredths of the figure's own width (the view's CSS makes the figure a container), so that as
// the figure scales down in a narrow output the select stays on its drawn twin, its type with it
export function menuPlace(box, width) {
  const at = (v) => `${+((v / width) * 100).toFixed(4)}cqw`;
  return `position: absolute; left: ${at(box.x)}; top: ${at(box.y)}; width: ${at(box.w)}; height: ${at(box.h)};`
    + ` font-size: min(13px, ${at(13)});`;
}

// One line under a view: a note, a good result or an error, read out politely
export function statusLine() {
  const line = document.createElement("div");
  line.className = "emq-status";
  line.setAttribute("role", "status");
  line.setAttribute("aria-live", "polite");
  return {
    line,
    show(message, kind = "note") {
      line.className = `emq-status emq-${kind}`;
      line.textContent = message ? (kind === "bad" ? `⚠ ${message}` : message) : "";
    },
  };
}

// A line that says what Redis answered: read out politely when it changes, as the caption is
export function politeLine(tag = "div") {
  const line = document.createElement(tag);
  line.className = "emq-status";
  line.setAttribute("role", "status");
  line.setAttribute("aria-live", "polite");
  return line;
}

// A button held off while its request runs: `aria-disabled`, not `disabled`, so that a keyboard's
// focus stays on it (a disabled button drops focus to the page's top, and the next Tab starts
// there); a click meanwhile is for its handler to ignore (`isHeld`)
export function hold(button, on) {
  if (on) button.setAttribute("aria-disabled", "true");
  else button.removeAttribute("aria-disabled");
}
export const isHeld = (button) => button.getAttribute("aria-disabled") === "true";

// A button for what needs Redis: a click asks whether a kernel listens and, without one, says in one
// line on `status` that `what` needs it; with one it sends `message()` (the values the page shows
// now, which the kernel checks against its bounds) and the kernel answers through the model.
// The button is held (`hold`) from the click until the message is sent or, with `until`, until
// the kernel's message of that kind says it is done (at most `patience` ms): a click meanwhile
// sends nothing more. A view whose state turns the button off (`disabled`) sets it again in
// `onSettle`.
export function kernelButton(model, { label, what, status, message, until = null, patience = 30000, onSettle = () => {} }) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = label;
  button.setAttribute("data-lm-suppress-shortcuts", "true");
  button.addEventListener("keydown", (event) => event.stopPropagation());
  let timer = null;
  const settle = () => {
    clearTimeout(timer);
    model.off("msg:custom", answered);
    hold(button, false);
    onSettle(); // a view whose state also disables the button sets it again
  };
  function answered(reply) {
    if (reply && reply.kind === until) settle();
  }
  button.addEventListener("click", async () => {
    if (isHeld(button)) return;
    hold(button, true);
    status.show("asking the kernel…");
    const heard = await askKernel(model);
    if (!heard) {
      settle();
      status.show(`${what} ${NEEDS_KERNEL}.`, "bad");
      return;
    }
    if (until) {
      model.on("msg:custom", answered);
      timer = setTimeout(settle, patience);
    }
    try {
      model.send(message());
    } catch (error) {
      settle();
      status.show(`${what} ${NEEDS_KERNEL}.`, "bad");
      return;
    }
    if (!until) settle();
    status.show("running on Redis…");
  });
  return button;
}

// One value shared by views in one page under a key (a DoubleView following a FrontierView):
// publish(value) tells the others, onValue hears theirs; the kernel is told nothing. `key` is a
// function: a view displayed before it was linked learns its key later (call refresh on a change).
export function sharedValue(key, onValue) {
  const bus = (globalThis.__emqShared = globalThis.__emqShared || new EventTarget());
  const me = {};
  let heardOn = "";
  const heard = (event) => {
    if (event.detail.from !== me) onValue(event.detail.value);
  };
  const shared = {
    refresh() {
      const now = key() || "";
      if (now === heardOn) return;
      if (heardOn) bus.removeEventListener(heardOn, heard);
      heardOn = now;
      if (now) bus.addEventListener(now, heard);
    },
    publish(value) {
      shared.refresh();
      if (heardOn) bus.dispatchEvent(new CustomEvent(heardOn, { detail: { from: me, value } }));
    },
    close() {
      if (heardOn) bus.removeEventListener(heardOn, heard);
      heardOn = "";
    },
  };
  shared.refresh();
  return shared;
}

// A range over a list of [label, value] choices (the model's `choices`, e.g. priorities that are
// not one apart), bound to the model's `name`, which holds the value; the readout shows the label
export function choiceSlider(model, { name, label, choices, onInput }) {
  const id = uid(`emq-${name}`);
  const row = document.createElement("div");
  row.className = "emq-row";
  row.innerHTML = `<label class="emq-name" for="${id}">${esc(label)}</label>`
    + `<input type="range" id="${id}" min="0" step="1" data-lm-suppress-shortcuts="true">`
    + `<output for="${id}" aria-hidden="true"></output>`;
  const input = row.querySelector("input");
  const output = row.querySelector("output");
  const list = () => model.get(choices) || [];
  const update = () => {
    const options = list();
    const at = Math.max(0, options.findIndex(([, value]) => value === model.get(name)));
    input.max = String(options.length - 1);
    if (Number(input.value) !== at) input.value = String(at);
    const [shown, value] = options[at] || ["", 0];
    output.textContent = `${shown} = ${thousands(value)}`;
    input.setAttribute("aria-valuetext", output.textContent);
  };
  input.setAttribute("aria-label", label);
  input.addEventListener("input", () => {
    const chosen = list()[Math.round(Number(input.value))];
    if (!chosen) return;
    model.set(name, chosen[1]);
    if (onInput) onInput(chosen[1]);
  });
  input.addEventListener("keydown", (event) => event.stopPropagation());
  update();
  return { row, input, update };
}

// Subscribe each [event, handler] pair to the model; the function returned unsubscribes them
// all (what a view's render returns, for anywidget to call when the view goes away)
export function listen(model, pairs) {
  for (const [event, handler] of pairs) model.on(event, handler);
  return () => {
    for (const [event, handler] of pairs) model.off(event, handler);
  };
}

// A view's drawing, run only when the state it draws changed (JSON of stateOf()): a control's own
// move reaches a view twice, as the model's change event and as the control's input, and is
// drawn once. The function returned gives the state either way.
export function whenChanged(stateOf, paint) {
  let last;
  return () => {
    const state = stateOf();
    const key = JSON.stringify(state);
    if (key !== last) {
      last = key;
      paint(state);
    }
    return state;
  };
}

// [event, handler] pairs: one for a change of each of the model's `names`
export function changes(names, handler) {
  return names.map((name) => [`change:${name}`, handler]);
}
