// Notebook 05's double: the 64 bits Redis keeps for one score, the bits of the exact score that
// fall off past the mantissa, the two doubles around it (a tie goes to the even one), and the gap
// to the next double as the score crosses 2^53. The page computes all of it; only the button asks
// the kernel, to store the job on Redis and send back the 64 bits Redis kept.

import { INK, MUTED, GRID, TITLE, TEXT, GOOD, BAD, svgDocument, rect, line, circle, path, text, scale, axes } from "./visual.js";
import { COUNTER_MASK, priorityScore, storedScore, thousands, power } from "./score.js";
import { EXPONENT_BIAS, MANTISSA_BITS, doubleBits, exponentOf, spacing, gapText, exactBits, rounding,
  mantissaEnd } from "./doubles.js";
import { renderStopsView } from "./stops_view.js";

const WIDTH = 800;
const HEIGHT = 500;
const FALL_OFF = 5; // columns right of the mantissa for bits that fall off: scores up to 2^58
const COLORS = { sign: ["#dddddd", "#6b6b6b"], exponent: ["#cfe8d9", "#24804d"], mantissa: ["#e3d6ef", "#7b4fa6"],
  fallen: ["#f6c9d0", "#b00020"] };

function facts({ priority, counter }) {
  const exact = priorityScore(priority, counter);
  const stored = storedScore(priority, counter);
  const change = BigInt(stored) - exact;
  const [kept, fallen] = exactBits(exact);
  return { exact, stored, change, kept, fallen, bits: doubleBits(stored), exponent: exponentOf(stored) - EXPONENT_BIAS };
}
const plural = (n, word, verb) => `${n} ${word}${n === 1 ? "" : "s"} ${verb}${n === 1 ? "s" : ""}`;

// The figure's text alternative (widgets.double.double_describe says the same)
export function describe(state) {
  const f = facts(state);
  const lost = f.fallen.length ? `${plural(f.fallen.length, "bit", "fall").replace(/ fall/, " of it fall")} off past the mantissa`
    : "every bit of it fits the mantissa";
  const how = f.change === 0n ? "" : rounding(f.exact, f.stored).tie
    ? ": it lay halfway between two doubles and went to the one whose mantissa ends in 0"
    : ": it went to the nearer of two doubles";
  return `The 64 bits of the double stored for the score ${thousands(f.exact)} (priority ${thousands(state.priority)}, `
    + `counter ${thousands(state.counter)}): exponent ${f.exponent}, ${lost}, stored `
    + `${f.change === 0n ? "exactly" : `${f.change > 0n ? "+" : ""}${f.change} from it`}${how}. `
    + `Below, the gap to the next double against the score, doubling at every power of two from 2⁵³: here ${gapText(spacing(f.stored))}.`;
}

// The readout (echomq_viz.core.doubles.double_text)
export function readout(state) {
  const f = facts(state);
  const biased = f.exponent + EXPONENT_BIAS;
  return [`exact score   ${thousands(f.exact)} = ${thousands(state.priority)} × ${power(2, 32)} + ${thousands(state.counter)}`,
    `stored double ${thousands(BigInt(f.stored))}${f.change === 0n ? " (exact)" : ` (${f.change > 0n ? "+" : ""}${f.change})`}`,
    `sign ${f.bits[0]} | exponent ${f.bits.slice(1, 12)} = ${biased} − ${EXPONENT_BIAS} = ${f.exponent} | mantissa ${f.bits.slice(12)}`,
    `exact bits after the lead 1: ${f.kept}${f.fallen ? ` | fall off: ${f.fallen}` : ""}`,
    `gap to the next double: ${gapText(spacing(f.stored))}`].join("\n");
}

function bitRows(f, left, top, cell) {
  let out = "";
  const cellAt = (column, row, bit, kind) => rect(left + column * cell, top + row * 26, cell - 1.5, 22,
    { fill: COLORS[kind][bit === "1" ? 1 : 0] });
  for (let i = 0; i < 64; i++) out += cellAt(i, 0, f.bits[i], i === 0 ? "sign" : i < 12 ? "exponent" : "mantissa");
  for (let i = 0; i < MANTISSA_BITS; i++) out += cellAt(12 + i, 1, f.kept[i], "mantissa");
  for (let i = 0; i < Math.min(FALL_OFF, f.fallen.length); i++) out += cellAt(64 + i, 1, f.fallen[i], "fallen");
  const edge = left + 64 * cell - 0.75;
  out += line(edge, top - 4, edge, top + 52, { stroke: COLORS.fallen[1], "stroke-width": 1.5, "stroke-dasharray": "4 3" });
  out += text(left - 8, top + 11, "stored double", { anchor: "end", baseline: "middle" });
  out += text(left - 8, top + 37, "exact, after lead 1", { anchor: "end", baseline: "middle" });
  out += text(left + 0.5 * cell, top - 8, "sign", { anchor: "end", color: COLORS.sign[1] });
  out += text(left + 1 * cell, top - 8, "exponent (11 bits)", { color: COLORS.exponent[1] });
  out += text(left + 38 * cell, top - 8, "mantissa (52 bits, after an implicit 1)", { anchor: "middle", color: COLORS.mantissa[1] });
  out += text(left + (64 + FALL_OFF / 2) * cell, top - 8, "fall off", { anchor: "middle", color: COLORS.fallen[1] });
  const tick = (column, label) => text(left + (column + 0.5) * cell, top + 56, label, { anchor: "middle", baseline: "hanging" });
  out += tick(0, "63") + tick(12, "51") + tick(63, "0");
  out += text(left - 8, top + 56, "bit: dark 1, light 0", { anchor: "end", baseline: "hanging", color: MUTED });
  return out;
}

// The exact score on a line between the two doubles around it; the stored one ringed
function numberLine(f, left, right, y) {
  const r = rounding(f.exact, f.stored);
  let out = text(left, y - 34, f.change === 0n ? "The exact score is a double itself: stored as it is."
    : r.tie ? "The exact score lies halfway between two doubles: a tie, which goes to the one whose mantissa ends in 0."
      : "The exact score lies between two doubles and goes to the nearer one.", { size: TEXT });
  if (f.change === 0n) return out;
  const x = scale(0, Number(r.above - r.below), left + 190, right - 190);
  out += line(left + 60, y, right - 60, y, { stroke: INK });
  for (const d of [r.below, r.above]) {
    const end = mantissaEnd(Number(d));
    out += line(x(Number(d - r.below)), y - 8, x(Number(d - r.below)), y + 8, { stroke: INK, "stroke-width": 2 });
    const stored = d === r.stored;
    out += text(x(Number(d - r.below)), y + 14, `${thousands(d)} (mantissa …${end})${stored ? ": stored" : ""}`,
      { anchor: "middle", baseline: "hanging", color: stored ? GOOD : INK, weight: stored ? 600 : undefined });
  }
  out += circle(x(Number(r.stored - r.below)), y, 9, { fill: "none", stroke: GOOD, "stroke-width": 2.5 });
  const ex = x(Number(f.exact - r.below));
  out += path(`M${ex - 6},${y - 14} L${ex},${y - 4} L${ex + 6},${y - 14} Z`, { fill: BAD, stroke: BAD });
  out += text(ex, y - 18, `exact ${thousands(f.exact)}`, { anchor: "middle", color: BAD });
  return out;
}

// The gap to the next double against the score, both as powers of two: a staircase
function staircase(f, left, right, top, bottom) {
  const [low, high] = [51, 58];
  const x = scale(low, high, left, right);
  const y = scale(low - MANTISSA_BITS - 0.5, high - MANTISSA_BITS + 0.5, bottom, top);
  const xTicks = [];
  for (let e = low; e <= high; e++) xTicks.push([e, power(2, e)]);
  const yTicks = [];
  for (let s = low - MANTISSA_BITS; s <= high - MANTISSA_BITS; s++) yTicks.push([s, gapText(2 ** s)]);
  let out = text(20, top - 14, "gap to the next double (each step: twice the one before)", { size: TEXT, color: MUTED });
  for (const [v] of yTicks) out += line(left, y(v), right, y(v), { stroke: GRID });
  out += axes(x, y, { xTicks, yTicks, xLabel: "the stored score (powers of two, evenly spaced)" });
  let d = `M${x(low)},${y(low - MANTISSA_BITS)}`;
  for (let e = low + 1; e <= high; e++) d += ` L${x(e)},${y(e - 1 - MANTISSA_BITS)} L${x(e)},${y(e - MANTISSA_BITS)}`;
  out += path(d, { stroke: "#555555", "stroke-width": 1.5 });
  out += line(x(53), top, x(53), bottom, { stroke: BAD, "stroke-dasharray": "4 3" });
  out += text(x(53) + 6, top + 4, `${power(2, 53)}: whole numbers stop being 1 apart`, { color: BAD, baseline: "hanging" });
  const gap = spacing(f.stored);
  const [dotX, dotY] = [x(Math.log2(f.stored)), y(Math.log2(gap))];
  out += circle(dotX, dotY, 7, { fill: "#ffffff", stroke: INK, "stroke-width": 2.5 });
  out += text(dotX + 12, dotY - 10, `here: ${gapText(gap)}`, { weight: 600 });
  return out;
}

// The figure as SVG text: what the page shows, and what a stored notebook's still is made from
export function still(state) {
  const f = facts(state);
  const lost = f.fallen.length ? plural(f.fallen.length, "bit", "fall") + " off" : "nothing falls off";
  const change = f.change === 0n ? "exactly" : `${f.change > 0n ? "+" : "−"}${thousands(f.change < 0n ? -f.change : f.change)} from the exact score`;
  let body = text(20, 24, `exponent ${f.exponent}: ${lost}; stored ${change}`, { size: TITLE, weight: 600 });
  const left = 150;
  body += bitRows(f, left, 62, (790 - left) / (64 + FALL_OFF));
  body += numberLine(f, 20, 780, 200);
  body += staircase(f, 70, 770, 300, 440);
  return svgDocument(WIDTH, HEIGHT, describe(state), body);
}

// Redis's 64 bits, marked against the page's own double
export function answerLine(state) {
  const answer = state.answer || {};
  if (!answer.bits) return ["", "note"];
  const mine = doubleBits(storedScore(answer.priority, answer.counter));
  const same = mine === answer.bits;
  const which = answer.priority === state.priority && answer.counter === state.counter ? ""
    : ` (for priority ${thousands(answer.priority)}, counter ${thousands(answer.counter)})`;
  return [`Redis stored ${thousands(BigInt(answer.stored))}: ${same ? "the same 64 bits as the page's double"
    : "DIFFERENT bits from the page's double"}${which}`, same ? "good" : "bad"];
}

const NAMES = ["stops", "priority", "counter", "link", "redis_enabled", "answer", "status"];
function render({ model, el }) {
  return renderStopsView({ model, el }, { css: "emq-double", names: NAMES,
    counter: { name: "counter", label: "counter", exactLabel: "exact counter", top: () => Number(COUNTER_MASK) },
    button: { label: "Store it on Redis", what: "Storing the job on Redis",
      message: (m) => ({ kind: "run", priority: m.get("priority"), counter: m.get("counter") }) },
    still, describe, readout, answerLine });
}

export default { render };
