// sweep-grid.js: what the lab's sweep panel reads from its boxes, before
// the server does (pure: no DOM; unit-tested in static/jstest). A values
// box is "v1,v2,..." (kept as written, trimmed) or "lo:hi:step" (a numeric
// range, both ends included); a seeds box is "1-3", "1,3,7" or a mix.
// These mirror the server's parsing (scenarios/sweep: ParseGrid,
// ParseSeeds) for the panel's live count only: the server checks the grid
// again and its errors are the ones shown.

export const MAX_VALUES_PER_AXIS = 100;
export const MAX_SEEDS = 100;

// goFloat formats a number as Go's strconv.FormatFloat(v, 'g', -1, 64)
// does (the shortest digits, with an exponent below 1e-4 and from 1e6:
// "1e+06", "2.5e-05"), so a range's values read as the server's.
export function goFloat(v) {
  if (v === 0) return "0";
  if (!Number.isFinite(v)) return String(v);
  const [mant, e] = v.toExponential().split("e");
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return mant + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
  return String(v);
}

// roundDrift rounds v to a millionth of step in significant digits (at any
// scale), taking away the drift of lo + i*step: 0.1 + 2*0.1 is
// 0.30000000000000004, rounded 0.3.
export function roundDrift(v, step) {
  if (v === 0) return 0;
  const digits = Math.floor(Math.log10(Math.abs(v))) - Math.floor(Math.log10(step)) + 7;
  if (digits < 1) return 0;
  if (digits >= 17) return v;
  return Number(v.toPrecision(digits));
}

// number parses a finite number written out in full ("", "1x", "Infinity":
// null).
function number(s) {
  s = s.trim();
  if (s === "" || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

// parseValues reads a values box: { values } or { error }.
export function parseValues(text) {
  const rhs = String(text == null ? "" : text);
  if (rhs.trim() === "") return { error: "no values: want e.g. 1,10,100 or 0.1:0.5:0.1" };
  if (rhs.includes(":") && !rhs.includes(",")) return parseRange(rhs);
  const values = rhs.split(",").map((s) => s.trim());
  if (values.length > MAX_VALUES_PER_AXIS) return { error: values.length + " values, at most " + MAX_VALUES_PER_AXIS };
  const seen = new Set();
  for (let i = 0; i < values.length; i++) {
    if (values[i] === "") return { error: "value " + (i + 1) + " is empty" };
    if (seen.has(values[i])) return { error: "value " + JSON.stringify(values[i]) + " is given twice" };
    seen.add(values[i]);
  }
  return { values };
}

function parseRange(rhs) {
  const parts = rhs.split(":");
  if (parts.length !== 3) return { error: "range " + JSON.stringify(rhs.trim()) + ": want lo:hi:step" };
  const names = ["lo", "hi", "step"];
  const b = [];
  for (let i = 0; i < 3; i++) {
    const v = number(parts[i]);
    if (v === null) return { error: "range " + names[i] + " " + JSON.stringify(parts[i].trim()) + " is not a number" };
    b.push(v);
  }
  const [lo, hi, step] = b;
  if (step <= 0) return { error: "range step " + goFloat(step) + ": want > 0" };
  if (lo > hi) return { error: "range lo " + goFloat(lo) + " is above hi " + goFloat(hi) };
  const steps = Math.floor((hi - lo) / step + 1e-9);
  if (steps + 1 > MAX_VALUES_PER_AXIS) return { error: "range has " + (steps + 1) + " values, at most " + MAX_VALUES_PER_AXIS };
  const values = [];
  for (let i = 0; i <= steps; i++) values.push(goFloat(roundDrift(lo + i * step, step)));
  return { values };
}

// parseSeeds reads a seeds box: { seeds } (distinct, >= 1, in order) or
// { error }.
export function parseSeeds(text) {
  const arg = String(text == null ? "" : text);
  if (arg.trim() === "") return { error: "no seeds: want e.g. 1-5 or 1,3,7" };
  const seeds = [];
  const seen = new Set();
  for (let part of arg.split(",")) {
    part = part.trim();
    if (part === "") return { error: "empty seed in the list" };
    const ends = part.split("-");
    if (ends.length > 2) return { error: "seed " + JSON.stringify(part) + ": want a whole number >= 1" };
    const nums = ends.map((s) => (/^\s*\d+\s*$/.test(s) ? Number(s) : NaN));
    if (nums.some((n) => !(n >= 1) || !Number.isSafeInteger(n))) return { error: "seed " + JSON.stringify(part) + ": want a whole number >= 1" };
    const lo = nums[0];
    const hi = nums.length === 2 ? nums[1] : lo;
    if (lo > hi) return { error: "seed range " + JSON.stringify(part) + ": " + lo + " is above " + hi };
    if (hi - lo >= MAX_SEEDS || seeds.length + (hi - lo) + 1 > MAX_SEEDS) return { error: "more than " + MAX_SEEDS + " seeds" };
    for (let s = lo; s <= hi; s++) {
      if (seen.has(s)) return { error: "seed " + s + " (in " + JSON.stringify(part) + ") is given twice" };
      seen.add(s);
      seeds.push(s);
    }
  }
  return { seeds };
}

// runCount says what a grid makes: points (the product of the axes' value
// counts), seeds and runs, and the text the panel shows ("3 points × 2
// seeds = 6 runs"); null counts when a box does not parse.
export function runCount(valueCounts, seedCount) {
  const known = valueCounts.length > 0 && valueCounts.every((n) => Number.isInteger(n) && n > 0);
  const points = known ? valueCounts.reduce((a, b) => a * b, 1) : null;
  const seeds = Number.isInteger(seedCount) && seedCount > 0 ? seedCount : null;
  const runs = points !== null && seeds !== null ? points * seeds : null;
  const n = (x, one, many) => (x === null ? "? " + many : x + " " + (x === 1 ? one : many));
  const text = n(points, "point", "points") + " × " + n(seeds, "seed", "seeds") + " = " + n(runs, "run", "runs");
  return { points, seeds, runs, text };
}

// gridArg is one axis as the API's grid takes it: "PATH=VALUES".
export function gridArg(path, text) {
  return String(path).trim() + "=" + String(text).trim();
}

// axisOfField maps an error's field in a refused sweep to the panel's
// axis it is about (its index), or -1: "grid[1]", "axes[0].values", or
// a field naming the axis' path ("cc.params.wr", "scenario.cc.params.wr").
export function axisOfField(field, paths) {
  const m = /^(?:grid|axes)\[(\d+)\]/.exec(field || "");
  if (m) return Number(m[1]);
  if (!field) return -1;
  const f = field.replace(/^scenario\./, "");
  return paths.findIndex((p) => p && (f === p || f.startsWith(p + ".") || f.startsWith(p + "[")));
}
