// The IEEE-754 double that holds a score, in the page (echomq_viz.core.doubles): its 64 bits,
// the bits that fall off, the gap to the next double, and which neighbour a score rounds to.
// Every double here is a whole number at or above 2^51, so BigInt holds each exactly.

import { thousands, power } from "./score.js";

export const MANTISSA_BITS = 52;
export const EXPONENT_BIAS = 1023;

const scratch = new DataView(new ArrayBuffer(8));
function word(x) {
  scratch.setFloat64(0, x);
  return scratch.getBigUint64(0);
}
function fromWord(w) {
  scratch.setBigUint64(0, w);
  return scratch.getFloat64(0);
}

// struct.pack('>d', x) as 64 characters, sign first (double_bits)
export function doubleBits(x) {
  return word(x).toString(2).padStart(64, "0");
}
// the biased exponent (double_fields(x)[1])
export function exponentOf(x) {
  return parseInt(doubleBits(x).slice(1, 12), 2);
}
// the last bit of the mantissa: a tie goes to the neighbour where it is 0
export function mantissaEnd(x) {
  return Number(word(x) & 1n);
}
// math.ulp for a positive normal double
export function spacing(x) {
  return 2 ** (exponentOf(x) - EXPONENT_BIAS - MANTISSA_BITS);
}
// gap_text: "4,096" from 1 up, "2⁻²⁰" below 1
export function gapText(gap) {
  return gap >= 1 ? thousands(BigInt(gap)) : power(2, Math.round(Math.log2(gap)));
}
// A whole number's bits after its leading 1: [the 52 a mantissa has room for, the ones that fall off]
export function exactBits(number) {
  const after = BigInt(number).toString(2).slice(1);
  return [after.slice(0, MANTISSA_BITS).padEnd(MANTISSA_BITS, "0"), after.slice(MANTISSA_BITS)];
}
// round_score as whole numbers: the doubles at or under and at or over the exact score, the one
// stored, and whether the score sat exactly halfway (a tie)
export function rounding(exact, stored) {
  const s = BigInt(stored);
  if (s === exact) return { below: s, above: s, stored: s, tie: false, way: "exact" };
  const below = s > exact ? BigInt(fromWord(word(stored) - 1n)) : s;
  const above = s > exact ? s : BigInt(fromWord(word(stored) + 1n));
  return { below, above, stored: s, tie: exact - below === above - exact, way: s > exact ? "up" : "down" };
}
