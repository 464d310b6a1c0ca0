// sweep-view.js: the sweep page's pure pieces (no DOM; unit-tested in
// static/jstest): a metric's formatter from the unit the API gives, an
// axis' values as numbers or categories, one axis' chart data (mean and
// 95% interval per value), the heatmap's grid and its colour scale.
import { fmtFor } from "./charts/format.js";

// metricUnit maps the unit GET /api/sweeps/{id} gives a metric ("bytes",
// "µs", "Gbps", "" for a plain number) to a chart formatter's unit and the
// factor into it: µs are charted as ns, Gbps as bps, so that axes and
// values take the run pages' decimal prefixes (147 µs, 1.5 ms, 95 Gbps).
export function metricUnit(unit) {
  switch (unit) {
    case "bytes":
    case "B":
      return { unit: "bytes", mul: 1 };
    case "µs":
    case "us":
      return { unit: "ns", mul: 1e3 };
    case "ns":
      return { unit: "ns", mul: 1 };
    case "Gbps":
      return { unit: "bps", mul: 1e9 };
    case "bps":
      return { unit: "bps", mul: 1 };
  }
  return { unit: "", mul: 1 };
}

// metricFormat formats a metric's value (in the API's unit) for people:
// 13.6 MB, 147 µs, 1.5 ms, 95 Gbps, 2.13.
export function metricFormat(unit) {
  const m = metricUnit(unit);
  const f = fmtFor(m.unit);
  return (v) => (v == null || v === "" || !Number.isFinite(Number(v)) ? "" : f(Number(v) * m.mul));
}

// numericValues reads an axis' values as numbers, or null when any is not
// a plain number ("40Gbps", "32MiB", "dcqcn"): the axis is then
// categorical.
export function numericValues(values) {
  const out = [];
  for (const v of values || []) {
    const s = String(v).trim();
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
    const n = Number(s);
    if (!Number.isFinite(n)) return null;
    out.push(n);
  }
  return out.length ? out : null;
}

// logScale says whether numeric axis values are better drawn on a log
// scale: all positive, at least three, spanning two decades or more
// (1, 10, 100).
export function logScale(xs) {
  if (!xs || xs.length < 3 || xs.some((x) => !(x > 0))) return false;
  return Math.max(...xs) / Math.min(...xs) >= 100;
}

// stat is a point's value of a metric, or null.
function stat(p, key) {
  const s = p && p.metrics && p.metrics[key];
  return s && s.n > 0 && Number.isFinite(s.mean) ? s : null;
}

// lineData shapes a one-axis sweep for its chart: x (the axis' numbers,
// ascending; or 0..n-1 for categories, labels then naming them), the mean,
// lo and hi of the metric per x (null where no run has finished), and the
// point index of each x (for clicks).
export function lineData(sweep, key) {
  const axis = ((sweep.spec && sweep.spec.axes) || [])[0] || { values: [] };
  const nums = numericValues(axis.values);
  const rows = (sweep.points || []).map((p) => {
    const v = p.values[0];
    const i = axis.values.indexOf(v);
    const s = stat(p, key);
    return { x: nums ? nums[i] : i, label: v, index: p.index, mean: s ? s.mean : null, lo: s ? s.lo : null, hi: s ? s.hi : null };
  });
  rows.sort((a, b) => a.x - b.x);
  return {
    categorical: !nums,
    log: !!nums && logScale(nums),
    labels: rows.map((r) => r.label),
    x: rows.map((r) => r.x),
    mean: rows.map((r) => r.mean),
    lo: rows.map((r) => r.lo),
    hi: rows.map((r) => r.hi),
    index: rows.map((r) => r.index),
  };
}

// heatData shapes a two-axis sweep: rows are the first axis' values,
// columns the second's, each cell { index, mean, lo, hi, n } (mean null
// where no run has finished), and the means' min and max.
export function heatData(sweep, key) {
  const axes = (sweep.spec && sweep.spec.axes) || [];
  const rows = (axes[0] && axes[0].values) || [];
  const cols = (axes[1] && axes[1].values) || [];
  const cells = rows.map(() => cols.map(() => null));
  let min = null;
  let max = null;
  for (const p of sweep.points || []) {
    const i = rows.indexOf(p.values[0]);
    const j = cols.indexOf(p.values[1]);
    if (i < 0 || j < 0) continue;
    const s = stat(p, key);
    cells[i][j] = { index: p.index, mean: s ? s.mean : null, lo: s ? s.lo : null, hi: s ? s.hi : null, n: s ? s.n : 0 };
    if (s) {
      min = min === null ? s.mean : Math.min(min, s.mean);
      max = max === null ? s.mean : Math.max(max, s.mean);
    }
  }
  return { rows, cols, cells, min, max };
}

// VIRIDIS is matplotlib's viridis (perceptually uniform, readable in grey
// and by the colour-blind), sampled at 9 stops from dark to light.
export const VIRIDIS = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];

// scaleOf places v in [min, max] as 0..1 (0.5 when they are equal).
export function scaleOf(v, min, max) {
  if (v == null || min == null || max == null || !Number.isFinite(v)) return null;
  if (!(max > min)) return 0.5;
  return Math.min(1, Math.max(0, (v - min) / (max - min)));
}

// heatColor is the colour of t in [0, 1] as "rgb(r, g, b)".
export function heatColor(t) {
  t = Math.min(1, Math.max(0, Number(t) || 0));
  const f = t * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(f));
  const u = f - i;
  const c = VIRIDIS[i].map((a, k) => Math.round(a + (VIRIDIS[i + 1][k] - a) * u));
  return "rgb(" + c.join(", ") + ")";
}

// luminance is the WCAG relative luminance of "rgb(r, g, b)".
export function luminance(rgb) {
  const c = (rgb.match(/\d+/g) || [0, 0, 0]).slice(0, 3).map((x) => {
    const v = Number(x) / 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

// textOn is the text colour that reads best on heatColor(t): white or
// black, whichever contrasts more (one of them always reaches 4.5:1).
export function textOn(t) {
  const l = luminance(heatColor(t));
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? "#ffffff" : "#000000";
}

// gradient is the CSS gradient of the whole scale, for the legend.
export function gradient() {
  return "linear-gradient(to right, " + VIRIDIS.map((_, i) => heatColor(i / (VIRIDIS.length - 1)) + " " + Math.round((100 * i) / (VIRIDIS.length - 1)) + "%").join(", ") + ")";
}

// progressText says how far a sweep is: "3 of 8 runs done, 1 failed, 2 live".
export function progressText(sw) {
  const parts = [(sw.runsDone || 0) + " of " + (sw.runsTotal || 0) + " runs done"];
  if (sw.runsFailed) parts.push(sw.runsFailed + " failed");
  if (sw.runsLive) parts.push(sw.runsLive + " live");
  if (sw.runsMissing) parts.push(sw.runsMissing + " missing");
  return parts.join(", ");
}

// pointLabel names a grid point by its axes: "cc.params.wr = 10, workload[0].load = 0.3".
export function pointLabel(sweep, p) {
  const axes = (sweep.spec && sweep.spec.axes) || [];
  return (p.values || []).map((v, i) => (axes[i] ? axes[i].path : "axis " + (i + 1)) + " = " + v).join(", ");
}

// unchangedAxes lists the axes (their paths) along which nothing changed:
// wherever the other axes hold the same values, every point gave the same
// results, metric for metric (the same metrics, the same means and
// intervals). Only once every point has all its runs finished and the
// sweep has stopped running ([] before); an axis needs two values or more.
export function unchangedAxes(sweep) {
  const axes = (sweep.spec && sweep.spec.axes) || [];
  const seeds = ((sweep.spec && sweep.spec.seeds) || []).length || 1;
  const pts = sweep.points || [];
  if (sweep.status === "running" || !axes.length || !pts.length || pts.some((p) => !(p.done >= seeds))) return [];
  const sig = (p) => JSON.stringify(Object.keys(p.metrics || {}).sort().map((k) => [k, p.metrics[k].mean, p.metrics[k].lo, p.metrics[k].hi]));
  const out = [];
  axes.forEach((axis, k) => {
    if ((axis.values || []).length < 2) return;
    const groups = new Map(); // the other axes' values -> the signature
    for (const p of pts) {
      const rest = JSON.stringify(p.values.filter((_, j) => j !== k));
      const s = sig(p);
      if (!groups.has(rest)) groups.set(rest, s);
      else if (groups.get(rest) !== s) return;
    }
    out.push(axis.path);
  });
  return out;
}

// unchangedText is the sweep page's hint for axes that changed nothing.
export function unchangedText(paths) {
  if (!paths.length) return "";
  const names = paths.length === 1 ? paths[0] : paths.slice(0, -1).join(", ") + " and " + paths[paths.length - 1];
  return names + " changed nothing in these runs: every value gave the same results, metric for metric. " +
    "The parameter may not act in this scenario, or not within its simulated time (a timer longer " +
    "than the run, a threshold the run never reaches: DCQCN's ai, for one, acts only when its " +
    "rate-increase timer fires, every 300 µs by default).";
}
