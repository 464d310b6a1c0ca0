// charts/flowstats.js: pure helpers for the run charts that answer
// questions about flows as a whole: per-flow throughput averaged over a
// stated window, aggregates (total throughput, active flows, bottleneck
// utilisation), the top flows by bytes, FCT slowdown CDFs and convergence
// to the fair share. No DOM here: node --test static/jstest/ covers it.

// niceCeil rounds a positive number up to 1, 2 or 5 × a power of ten.
export function niceCeil(x) {
  if (!(x > 0) || !Number.isFinite(x)) return 0;
  const p = Math.pow(10, Math.floor(Math.log10(x)));
  for (const m of [1, 2, 5, 10]) if (m * p >= x * (1 - 1e-12)) return m * p;
  return 10 * p;
}

// AVG_POINTS is how many chart points (level-1 buckets) the per-flow
// throughput average spans.
export const AVG_POINTS = 10;

// averageWindow is the throughput chart's averaging window for points
// spaced spacingNs apart: AVG_POINTS of them, rounded up to 1/2/5 × 10^k ns.
export function averageWindow(spacingNs) {
  return niceCeil(AVG_POINTS * spacingNs);
}

// trailingMean is the mean of the non-null values v[j] with t[j] in
// (t[i] − w, t[i]] (null when there is none): a flow's throughput averaged
// over the window ending at t[i]. A flow has no points before it starts
// or after it ends, so its first and last windows average only what it
// delivered while active.
export function trailingMean(t, v, i, w) {
  let sum = 0;
  let n = 0;
  for (let j = i; j >= 0 && t[j] > t[i] - w; j--) {
    if (v[j] == null) continue;
    sum += v[j];
    n++;
  }
  return n ? sum / n : null;
}

// movingAverage applies trailingMean to every point (O(n) with a running sum).
export function movingAverage(t, v, w) {
  const out = new Array(t.length);
  let lo = 0;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < t.length; i++) {
    if (v[i] != null) { sum += v[i]; n++; }
    while (lo < i && !(t[lo] > t[i] - w)) {
      if (v[lo] != null) { sum -= v[lo]; n--; }
      lo++;
    }
    out[i] = v[i] == null ? null : n ? sum / n : null;
  }
  return out;
}

// aggregate sums per-flow throughput series at each time: [{t, total,
// active, util}] sorted by t. flows: [{t, v, dst}]; rates: dst -> bits/s
// of the link into that receiver. active is the number of flows with a
// point at t (series have points only while a flow is active); util is the
// busiest receiver link's utilisation: max over receivers of (throughput
// into it ÷ its link rate), null without rates.
export function aggregate(flows, rates) {
  const at = new Map();
  for (const f of flows) {
    for (let j = 0; j < f.t.length; j++) {
      const v = f.v[j];
      if (v == null) continue;
      let a = at.get(f.t[j]);
      if (!a) { a = { t: f.t[j], total: 0, active: 0, byDst: new Map() }; at.set(f.t[j], a); }
      a.total += v;
      a.active++;
      if (f.dst != null) a.byDst.set(f.dst, (a.byDst.get(f.dst) || 0) + v);
    }
  }
  const out = [...at.values()].sort((x, y) => x.t - y.t);
  for (const a of out) {
    let util = null;
    for (const [dst, v] of a.byDst) {
      const r = rates && rates[dst];
      if (r > 0) util = Math.max(util == null ? 0 : util, v / r);
    }
    a.util = util;
    delete a.byDst;
  }
  return out;
}

// topFlows returns the keys of the n flows that delivered the most bytes
// (ties: the smaller flow id first). bytes: Map or object key -> bytes.
export function topFlows(bytes, n) {
  const entries = bytes instanceof Map ? [...bytes.entries()] : Object.entries(bytes);
  entries.sort((a, b) => b[1] - a[1] || Number(a[0]) - Number(b[0]));
  return entries.slice(0, Math.max(0, n)).map((e) => String(e[0]));
}

// bytesOf estimates what a throughput series delivered: the sum of its
// samples × the spacing of its points, in bytes.
export function bytesOf(t, v) {
  let b = 0;
  for (let j = 1; j < t.length; j++) if (v[j] != null) b += (v[j] * (t[j] - t[j - 1])) / 8e9;
  return b;
}

// cdfPoints is the empirical CDF of the finite values: [[x, p], ...] with
// p = rank / n, one point per distinct value.
export function cdfPoints(values) {
  const xs = values.map(Number).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < xs.length; i++) {
    if (i + 1 < xs.length && xs[i + 1] === xs[i]) continue;
    out.push([xs[i], (i + 1) / xs.length]);
  }
  return out;
}

// bucketOf is the index of the size bucket a flow of size bytes falls in
// (buckets: [{lo_bytes, hi_bytes|null}] ascending), or -1.
export function bucketOf(size, buckets) {
  for (let i = buckets.length - 1; i >= 0; i--) if (size >= buckets[i].lo_bytes) return i;
  return -1;
}

// slowdownCdfs: the overall FCT slowdown CDF and one per size bucket with
// flows. rows: [{size, slowdown}] of finished flows; labels per bucket.
export function slowdownCdfs(rows, buckets) {
  const out = [{ label: "all flows (" + rows.length + ")", points: cdfPoints(rows.map((r) => r.slowdown)) }];
  buckets.forEach((b, i) => {
    const sel = rows.filter((r) => bucketOf(r.size, buckets) === i);
    if (sel.length) out.push({ label: b.label + " (" + sel.length + ")", points: cdfPoints(sel.map((r) => r.slowdown)) });
  });
  return out;
}

// parseCsv reads a simple CSV (no quoted commas) into objects by header.
export function parseCsv(text) {
  const lines = String(text).split(/\r?\n/).filter((l) => l.length);
  if (!lines.length) return [];
  const head = lines[0].split(",");
  return lines.slice(1).map((l) => {
    const cells = l.split(",");
    const o = {};
    head.forEach((h, i) => { o[h] = cells[i]; });
    return o;
  });
}

// CONVERGE_TOL and CONVERGE_HOLD_POINTS define convergence: a flow has
// converged at the first time t after its start from which its averaged
// throughput stays within ±CONVERGE_TOL of its fair share for
// CONVERGE_HOLD_POINTS consecutive points (the hold window). Its fair
// share at a time is its receiver link's rate ÷ the flows into that
// receiver active then.
export const CONVERGE_TOL = 0.1;
export const CONVERGE_HOLD_POINTS = 10;

// convergence: [{key, start, at, time}] for each flow (time = at − start,
// null when it never converged). flows: [{key, dst, t, v}] with v the
// averaged throughput; rates: dst -> bits/s.
export function convergence(flows, rates, tol = CONVERGE_TOL, hold = CONVERGE_HOLD_POINTS) {
  // flows into each receiver active at each time
  const count = new Map(); // dst -> Map(t -> n)
  for (const f of flows) {
    let m = count.get(f.dst);
    if (!m) { m = new Map(); count.set(f.dst, m); }
    for (let j = 0; j < f.t.length; j++) if (f.v[j] != null) m.set(f.t[j], (m.get(f.t[j]) || 0) + 1);
  }
  const out = [];
  for (const f of flows) {
    const rate = rates && rates[f.dst];
    const start = f.t.length ? f.t[0] : null;
    let at = null;
    if (rate > 0) {
      let run = 0;
      for (let j = 0; j < f.t.length; j++) {
        const n = count.get(f.dst).get(f.t[j]) || 1;
        const fair = rate / n;
        const ok = f.v[j] != null && Math.abs(f.v[j] - fair) <= tol * fair;
        run = ok ? run + 1 : 0;
        if (run >= hold) { at = f.t[j - hold + 1]; break; }
      }
    }
    out.push({ key: f.key, start, at, time: at == null || start == null ? null : at - start });
  }
  return out;
}
