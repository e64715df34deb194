// The score, in the page, exactly as the Lua computes it and Redis stores it.
//
// getPriorityScore (lua/includes/getPriorityScore.lua):
//   score = priority * 0x100000000 + (INCR pc) % 0x100000000
// priorityScore is that number exactly, as a BigInt (echomq_viz.core.score.priority_score);
// storedScore repeats the Lua's double arithmetic step by step, so it is the double Redis
// stores, bit for bit, past 2^53 too (echomq_viz.core.score.stored_score).
// tests/widgets/test_page_score.py holds both to Python's on generated cases.

export const TIER_SPAN = 4294967296n;          // 2^32: one priority step
export const COUNTER_MASK = TIER_SPAN - 1n;    // the low 32 bits
export const PRIORITY_LIMIT = 2097151;         // 2^21 - 1: the last tier whose scores are exact
export const EXACT_LIMIT = 2n ** 53n;          // a double holds every integer up to here

const SPAN = 4294967296;                       // the same 2^32, as the Lua's double

// priority * 2^32 + counter mod 2^32, exact; numbers or BigInts, whole and >= 0
export function priorityScore(priority, counter) {
  return BigInt(priority) * TIER_SPAN + BigInt(counter) % TIER_SPAN;
}

// The double the Lua computes for (priority, counter): Lua 5.1's numbers are doubles,
// % is a - floor(a / b) * b, and the last + rounds to the nearest double, ties to even.
export function storedScore(priority, counter) {
  const p = Number(priority);
  const c = Number(counter);
  return p * SPAN + (c - Math.floor(c / SPAN) * SPAN);
}

// A stored double back as the exact integer it holds (every double here is whole)
export function storedExact(stored) {
  return BigInt(stored);
}

export function isExact(priority, counter) {
  return BigInt(storedScore(priority, counter)) === priorityScore(priority, counter);
}

export function splitScore(score) {
  const s = BigInt(score);
  return [s / TIER_SPAN, s % TIER_SPAN];
}

// 4294967295 -> "4,294,967,295", as echomq_viz.core.notation.thousands writes it
export function thousands(n) {
  const text = BigInt(n).toString();
  const sign = text.startsWith("-") ? "-" : "";
  const digits = sign ? text.slice(1) : text;
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// "0x00000001_00000001": the tier half and the counter half apart (figures.plots.format_hex)
export function formatHex(score) {
  const s = BigInt(score);
  const high = (s >> 32n).toString(16).toUpperCase().padStart(8, "0");
  const low = (s & COUNTER_MASK).toString(16).toUpperCase().padStart(8, "0");
  return `0x${high}_${low}`;
}

// the 64 bits, most significant first (format(score, "064b")): all of them past 2^64, never cut
export function bits64(score) {
  return BigInt(score).toString(2).padStart(64, "0");
}

const SUPERSCRIPT = { "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻" };
// power(2, 53) -> "2⁵³" (echomq_viz.core.notation.power)
export function power(base, exponent) {
  return `${base}${String(exponent).replace(/[0-9-]/g, (d) => SUPERSCRIPT[d])}`;
}
