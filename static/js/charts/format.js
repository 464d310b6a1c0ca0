// charts/format.js: value formatting with decimal unit prefixes (pure: no DOM;
// unit-tested with node --test in static/jstest).

// Three significant digits, trailing zeros trimmed.
export function sig3(x) {
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1000) return String(Math.round(x));
  if (a < 1e-3) return x.toExponential(2);
  return String(Number(x.toPrecision(3)));
}

export const UNITS = {
  bytes: ["B", "KB", "MB", "GB", "TB", "PB"],
  bps: ["bps", "Kbps", "Mbps", "Gbps", "Tbps"],
  ns: ["ns", "µs", "ms", "s"],
  "": ["", "k", "M", "G", "T"],
};

// Index of the decimal (×1000) prefix to show `a` (>= 0) with, so that the
// scaled value lies in [1, 1000). Plain numbers only get a prefix from 10^4.
export function prefixIndex(unit, a) {
  const names = UNITS[unit] || UNITS[""];
  if (unit === "" && a < 1e4) return 0;
  let i = 0;
  while (i < names.length - 1 && a >= Math.pow(1000, i + 1) * 0.9995) i++;
  return i;
}

export function unitFormatter(unit) {
  const names = UNITS[unit] || UNITS[""];
  return function (v) {
    if (v == null || v === "") return "";
    v = Number(v);
    if (Number.isNaN(v)) return "";
    if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
    const i = prefixIndex(unit, Math.abs(v));
    const s = sig3(v / Math.pow(1000, i));
    return names[i] ? s + " " + names[i] : s;
  };
}

export const fmt = Object.freeze({
  bytes: unitFormatter("bytes"),
  bps: unitFormatter("bps"),
  ns: unitFormatter("ns"),
  num: unitFormatter(""),
});

export function fmtFor(unit) {
  return Object.prototype.hasOwnProperty.call(UNITS, unit || "") ? fmt[unit === "" || unit == null ? "num" : unit] : fmt.num;
}

// Fewest decimals (0..6) that show x exactly enough.
export function decimalsFor(x) {
  x = Math.abs(x);
  if (!(x > 0) || !Number.isFinite(x)) return 0;
  for (let d = 0; d <= 6; d++) {
    const s = x * Math.pow(10, d);
    if (Math.abs(Math.round(s) - s) < 1e-6 * Math.max(1, s)) return d;
  }
  return 6;
}

// uPlot axis `values` for a linear axis: one prefix for every tick (chosen
// by the largest tick), decimals from the tick increment, so adjacent ticks
// never print the same. Log axes format each tick on its own.
export function tickValues(unit, withUnit) {
  const names = UNITS[unit] || UNITS[""];
  const one = fmtFor(unit);
  return function (u, splits, axisIdx, space, incr) {
    const sc = u.scales[u.axes[axisIdx].scale];
    if (sc && sc.distr === 3) return splits.map((v) => (v == null ? null : one(v)));
    let m = 0;
    for (const s of splits) if (s != null && Math.abs(s) > m) m = Math.abs(s);
    const i = prefixIndex(unit, m);
    const div = Math.pow(1000, i);
    const dec = decimalsFor(incr / div);
    const suffix = withUnit && names[i] ? " " + names[i] : "";
    return splits.map((v) => (v == null ? null : (v === 0 ? "0" : (v / div).toFixed(dec)) + suffix));
  };
}

// unitOf maps a unit of the server's vocabulary (GET /api/vocabulary: "B",
// "bps", "ns", "" for a count, fraction or flag) to a formatter's unit.
export function unitOf(vocabUnit) {
  switch (vocabUnit) {
    case "B":
      return "bytes";
    case "bps":
    case "ns":
      return vocabUnit;
  }
  return "";
}
