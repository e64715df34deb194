// The page side that notebook 05's frontier and double share: a priority among the frontier's
// stops (one priority for both views on a page: moving one moves the other), a counter with its
// exact box, the figure and its caption, a readout, and one button that asks Redis, whose answer
// is marked against the page's own computation. Each view gives its drawing and its words.

import { VIEW_CSS } from "./visual.js";
import { slider, numberBox, statusLine, choiceSlider, kernelButton, politeLine, sharedValue, listen, whenChanged, figureBlock } from "./controls.js";

const NO_DEMO = "this view was made without a demo queue: no Redis button";

// view: { css, names, counter: {name, label, exactLabel, top(model)}, button: {label, what, message(model)},
//         still(state), describe(state), readout(state), answerLine(state) -> [text, kind] }
export function renderStopsView({ model, el }, view) {
  const stateOf = () => Object.fromEntries(view.names.map((name) => [name, model.get(name)]));
  const css = document.createElement("style");
  css.textContent = VIEW_CSS;
  const root = document.createElement("div");
  root.className = `emq-view ${view.css}`;
  const status = statusLine();
  const shared = sharedValue(() => model.get("link"), (priority) => {
    if (model.get("priority") === priority) return;
    model.set("priority", priority);
    draw();
  });
  const moved = () => {
    status.show("");
    draw();
  };
  const { name, label, exactLabel, top } = view.counter;
  const priority = choiceSlider(model, { name: "priority", label: "priority", choices: "stops",
    onInput: (value) => { shared.publish(value); moved(); } });
  const counter = slider(model, { name, label, min: 0, max: top(model), onInput: moved });
  const exact = numberBox(model, { name, label: exactLabel, min: 0, max: top(model), onInput: moved,
    onRefuse: (message) => status.show(message, "bad") });
  const { figure, caption, numbers } = figureBlock();
  const button = kernelButton(model, { label: view.button.label, what: view.button.what, status,
    message: () => view.button.message(model) });
  const answer = politeLine();
  const actions = document.createElement("div");
  actions.className = "emq-row";
  actions.append(button, answer);
  root.append(priority.row, counter.row, exact.row, figure, caption, numbers, actions, status.line);
  el.append(css, root);

  // drawn once a move, though a control's move arrives twice (controls.whenChanged)
  const paint = whenChanged(stateOf, (state) => {
    figure.innerHTML = view.still(state);
    caption.say(view.describe(state));
    numbers.textContent = view.readout(state);
    priority.update();
    counter.update();
    exact.update();
    button.disabled = !state.redis_enabled;
    const [said, kind] = state.redis_enabled ? view.answerLine(state) : [NO_DEMO, "note"];
    answer.className = `emq-status emq-${kind}`;
    answer.textContent = said;
  });
  function draw() {
    shared.refresh();
    const state = paint();
    if (state.status) status.show(state.status, "bad");
  }
  const answered = () => {
    status.show("");
    draw();
  };
  const stop = listen(model, view.names.map((name) => [`change:${name}`, name === "answer" ? answered : draw]));
  draw();
  return () => {
    shared.close();
    stop();
  };
}
