// flowcharts.js: what RunView adds to its per-flow charts (lab and run
// page): per-flow throughput averaged over a stated window, the charts of
// all flows together (total throughput, active flows, the busiest receiver
// link's utilisation), and which flows the per-flow charts show (the top
// ones by bytes, or all on demand). The arithmetic is in
// charts/flowstats.js.
import { fmt, timeChart } from "./charts/index.js";
import { AVG_POINTS, aggregate, averageWindow, bytesOf, movingAverage, topFlows, trailingMean } from "./charts/flowstats.js";

export const TOP_FLOWS = 8;

// throughputTitle is the per-flow throughput chart's title, stating its
// averaging window (the run page's and the compare page's).
export function throughputTitle(windowNs) {
  return "Throughput per flow (mean over the last " + fmt.ns(windowNs) + ")";
}

// windowOf is the averaging window of a run's throughput series: AVG_POINTS
// of the spacing of the first series with two points (0: none has).
export function windowOf(series) {
  for (const d of series) {
    for (let j = 1; j < d.t.length; j++) {
      const sp = d.t[j] - d.t[j - 1];
      if (sp > 0) return averageWindow(sp);
    }
  }
  return 0;
}
const AGG_EVERY_MS = 500; // live: recompute the aggregates at most this often

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  e.append(...kids);
  return e;
}

export class FlowCharts {
  constructor(view) {
    this.view = view;
    this.windowNs = 0;
    this.showAll = false;
    this.top = null; // Set of flow ids (strings) or null: not known yet
    this.lastAgg = 0;
    this.rebuildNeeded = false;
    this.charts = {};
    const tput = document.getElementById("chart-tput");
    if (!tput) return;
    this.tputEl = tput;
    const box = el("section", { class: "aggregates", id: "aggregates", "aria-labelledby": "agg-h" },
      el("h3", { id: "agg-h" }, "All flows together"),
      el("p", { class: "muted small", id: "agg-note" }, "Appears once the run has throughput samples."));
    const total = el("div", { class: "chart", id: "chart-total" });
    const active = el("div", { class: "chart", id: "chart-active" });
    const util = el("div", { class: "chart", id: "chart-util" });
    box.append(total, active, util);
    tput.before(box);
    this.charts.total = timeChart(total, { title: "Total throughput, all flows", unit: "bps", height: 200 });
    this.charts.active = timeChart(active, { title: "Active flows", unit: "", height: 200 });
    this.charts.util = timeChart(util, { title: "Bottleneck utilisation (busiest receiver link, %)", unit: "", height: 200 });
    this.pickText = el("span", { id: "flow-pick-text", class: "muted" });
    this.allBtn = el("button", { type: "button", class: "btn small", id: "flows-all", "aria-pressed": "false" }, "Show all flows");
    this.allBtn.addEventListener("click", () => {
      this.showAll = !this.showAll;
      this.view.rebuild("flows");
      this.showPick();
    });
    tput.before(el("div", { class: "toolbar flow-pick", role: "group", "aria-label": "Flows in the per-flow charts" }, this.pickText, this.allBtn));
  }

  reset() {
    this.windowNs = 0;
    this.top = null;
    this.lastAgg = 0;
    for (const ch of Object.values(this.charts)) ch.clear();
    this.showPick();
  }

  // noteSpacing fixes the averaging window from the first throughput
  // series with two points (the chart's bucket): AVG_POINTS buckets. The
  // throughput chart is made anew to state it in its title (and PNG).
  noteSpacing(d) {
    if (this.windowNs || d.t.length < 2) return;
    let sp = 0;
    for (let j = 1; j < d.t.length && !(sp > 0); j++) sp = d.t[j] - d.t[j - 1];
    if (!(sp > 0)) return;
    this.spacingNs = sp;
    this.windowNs = averageWindow(sp);
    const ch = this.view.charts.throughput_bps;
    if (ch) {
      const had = ch.seriesKeys().length > 0;
      ch.destroy();
      this.view.charts.throughput_bps = timeChart(this.tputEl, { title: this.tputTitle(), unit: "bps" });
      this.tputEl.dataset.windowNs = String(this.windowNs);
      if (had) this.rebuildNeeded = true;
    }
    // averages computed before the window was known
    for (const [i, k] of this.view.keys.entries()) {
      const dd = this.view.data[i];
      if (k && k.metric === "throughput_bps" && dd && dd.a) dd.a = movingAverage(dd.t, dd.v, this.windowNs);
    }
    const note = document.getElementById("agg-note");
    if (note) note.textContent = "Sums of the per-flow throughput, each a mean over the last " + fmt.ns(this.windowNs) + ".";
  }

  tputTitle() {
    return throughputTitle(this.windowNs);
  }

  // smooth appends the averaged values of d's new points (from index
  // from) to d.a and returns them.
  smooth(d, from) {
    this.noteSpacing(d);
    if (!d.a) d.a = [];
    const w = this.windowNs || 0;
    for (let j = from; j < d.t.length; j++) d.a[j] = d.v[j] == null ? null : w ? trailingMean(d.t, d.v, j, w) : d.v[j];
    return d.a.slice(from);
  }

  // shown: the default per-flow selection (no host picked).
  shown(entity, fallback) {
    if (this.showAll) return true;
    if (this.top) return this.top.has(entity);
    return fallback;
  }

  flowSeries() {
    const out = [];
    this.view.keys.forEach((k, i) => {
      if (k && k.metric === "throughput_bps") out.push({ key: k.entity, d: this.view.data[i] });
    });
    return out;
  }

  showPick() {
    if (!this.pickText) return;
    const n = this.flowSeries().length;
    const v = this.view;
    let text;
    if (v.selectedFlows) text = "Per-flow charts: the flows of host " + v.host + ".";
    else if (this.showAll) text = "Per-flow charts: all " + n + " flows.";
    else text = "Per-flow charts: the " + Math.min(TOP_FLOWS, n) + " flows that delivered the most bytes, of " + n + ".";
    this.pickText.textContent = text;
    this.allBtn.textContent = this.showAll ? "Show the top " + TOP_FLOWS : "Show all " + n + " flows";
    this.allBtn.setAttribute("aria-pressed", this.showAll ? "true" : "false");
    this.allBtn.hidden = n <= TOP_FLOWS && !this.showAll;
  }

  // update re-picks the top flows and redraws the aggregates (live: at
  // most every AGG_EVERY_MS; force at the end and for stored runs).
  update(force) {
    if (this.rebuildNeeded) {
      this.rebuildNeeded = false;
      this.view.rebuild("flows");
    }
    const now = Date.now();
    if (!force && now - this.lastAgg < AGG_EVERY_MS) return;
    this.lastAgg = now;
    const series = this.flowSeries();
    if (!series.length) return;
    const bytes = new Map(series.map((s) => [s.key, bytesOf(s.d.t, s.d.v)]));
    const top = new Set(topFlows(bytes, TOP_FLOWS));
    const same = this.top && this.top.size === top.size && [...top].every((k) => this.top.has(k));
    if (!same) {
      this.top = top;
      if (!this.view.selectedFlows && !this.showAll) this.view.rebuild("flows");
    }
    this.showPick();
    if (!this.charts.total) return;
    const rates = this.view.dstRates();
    const agg = aggregate(series.map((s) => ({ t: s.d.t, v: s.d.a || s.d.v, dst: this.view.flowDst(s.key) })), rates);
    const t = agg.map((a) => a.t);
    const put = (ch, key, label, vals) => {
      ch.clear();
      ch.ensureSeries(key, label);
      ch.append(key, t, vals);
      for (const mk of this.view.markers) ch.addMarker(mk.atNs, mk.label);
      ch.redraw();
    };
    put(this.charts.total, "total", "total", agg.map((a) => a.total));
    put(this.charts.active, "active", "active flows", agg.map((a) => a.active));
    const hasUtil = agg.some((a) => a.util != null);
    this.charts.util.el.hidden = !hasUtil;
    if (hasUtil) put(this.charts.util, "util", "utilisation %", agg.map((a) => (a.util == null ? null : a.util * 100)));
  }
}

export { AVG_POINTS };
