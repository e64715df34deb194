// Run by tests/widgets/test_page_score.py: compares the page's score functions with Python's.
//
//   PAGE_SCORE_MODULE=file:///.../score.js PAGE_SCORE_CASES=cases.json node page_score_cases.mjs
//
// cases.json: {"cases": [[p, c, score, stored, exact, split, storedSplit, thousands,
// storedThousands, hex, bits]], "powers": [[base, exponent, text]]}, every number a decimal
// string, a split "tier,low"; the last four are null for the scores whose digits Python left out.
// Prints one JSON line: {"compared": <cases>, "mismatches": <count>, "first": [<10 at most>]}.
import { readFileSync } from "node:fs";

const { PAGE_SCORE_MODULE: moduleUrl, PAGE_SCORE_CASES: casesPath } = process.env;
if (!moduleUrl || !casesPath) {
  console.error("set PAGE_SCORE_MODULE (a file URL) and PAGE_SCORE_CASES (a JSON path)");
  process.exit(2);
}
const score = await import(moduleUrl);
const { cases, powers } = JSON.parse(readFileSync(casesPath, "utf8"));

let compared = 0;
let mismatches = 0;
const first = [];
function check(what, got, want, where) {
  if (got === want) return;
  mismatches += 1;
  if (first.length < 10) first.push({ what, got, want, ...where });
}
const text = (v) => (typeof v === "bigint" ? v.toString() : String(v));
const pair = (two) => two.map(text).join(",");

for (const k of cases) {
  const [kp, kc, kScore, kStored, kExact, kSplit, kStoredSplit, kThousands, kStoredThousands, kHex, kBits] = k;
  const where = { p: kp, c: kc };
  const P = BigInt(kp);
  const C = BigInt(kc);
  // as BigInts always; as plain numbers too when both are safe integers (what sliders give)
  const inputs = [[P, C]];
  if (P <= BigInt(Number.MAX_SAFE_INTEGER) && C <= BigInt(Number.MAX_SAFE_INTEGER)) {
    inputs.push([Number(P), Number(C)]);
  }
  for (const [p, c] of inputs) {
    const arg = { ...where, as: typeof p };
    const exact = score.priorityScore(p, c);
    const stored = score.storedScore(p, c);
    check("priorityScore type", typeof exact, "bigint", arg);
    check("priorityScore", text(exact), kScore, arg);
    check("storedScore", Number.isInteger(stored) ? text(BigInt(stored)) : `${typeof stored} ${stored}`,
      kStored, arg); // a whole double's exact value
    if (!Number.isInteger(stored)) continue;
    check("isExact", score.isExact(p, c), kExact, arg);
    check("splitScore", pair(score.splitScore(exact)), kSplit, arg);
    check("splitScore(stored)", pair(score.splitScore(stored)), kStoredSplit, arg);
    if (kBits === null) continue;
    check("thousands", score.thousands(exact), kThousands, arg);
    check("thousands(stored)", score.thousands(stored), kStoredThousands, arg);
    check("formatHex", score.formatHex(exact), kHex, arg);
    check("bits64", score.bits64(exact), kBits, arg);
  }
  compared += 1;
}
for (const [base, exponent, want] of powers) {
  check("power", score.power(Number(base), Number(exponent)), want, { base, exponent });
}
console.log(JSON.stringify({ compared, mismatches, first }));
