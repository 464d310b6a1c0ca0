// runview.js: the charts of one run, live (over the WebSocket) or stored
// (from the chart API), shared by the lab and the run page. It keeps every
// decimated point it has seen, so selecting another port or host redraws
// from memory.
import { api } from "./common.js";
import { fmt, running, timeChart } from "./charts/index.js";
import { busiest } from "./charts/shape.js";
import { help, isPortMetric, unit } from "./vocabulary.js";
import { FlowCharts } from "./flowcharts.js";
import { bindTopoZoom } from "./topozoom.js";

const FLOW_CHARTS = ["throughput_bps", "cwnd_bytes", "rate_bps", "qp_solve_ns"];
const DEFAULT_FLOWS = 8;
const OPTIONAL = ["cwnd_bytes", "rate_bps", "qp_solve_ns"]; // hidden until the run has them
const AUTO_PORTS = 6;

function fmtNs(ns) {
  return fmt.ns(ns);
}

export class RunView {
  constructor() {
    this.keys = [];          // series index -> {metric, entity}
    this.data = [];          // series index -> {t: [], v: [], max}
    this.flows = [];         // [{id, src, dst}] when known
    this.selectedPorts = null; // Set of port names, or null: the busiest ones
    this.autoPorts = [];
    this.selectedFlows = null; // Set of flow ids (strings), or null: the first few
    this.host = null;
    this.markers = [];       // [{atNs, label}]
    this.algoMetric = "";
    this.algoMetrics = new Set();
    this.qp = running();
    this.charts = {};
    this.ws = null;
    this.makeCharts();
    this.fc = new FlowCharts(this);
    this.bindTopology();
    bindTopoZoom();
    const sel = document.getElementById("algo-series");
    if (sel) {
      sel.addEventListener("change", () => { this.setAlgoMetric(sel.value); this.rebuild("algo"); });
    }
  }

  makeCharts() {
    for (const el of document.querySelectorAll(".chart[data-metric]")) {
      const metric = el.dataset.metric;
      el.textContent = "";
      this.charts[metric] = timeChart(el, { title: el.dataset.title, unit: unit(metric) });
      if (OPTIONAL.includes(metric)) el.hidden = true;
    }
    const algoEl = document.getElementById("chart-algo");
    if (algoEl) {
      algoEl.textContent = "";
      this.charts.algo = timeChart(algoEl, { title: "Algorithm series", unit: "" });
    }
  }

  // setAlgoMetric picks the algorithm chart's series: the chart is made
  // anew with that series' unit and title, and its help shown below.
  setAlgoMetric(metric) {
    this.algoMetric = metric;
    const old = this.charts.algo;
    if (!old) return;
    old.destroy();
    this.charts.algo = timeChart(old.el, { title: metric ? metric + " per flow" : "Algorithm series", unit: unit(metric) });
    old.el.dataset.series = metric;
    const p = document.getElementById("algo-help");
    if (p) p.textContent = help(metric);
  }

  // reset forgets everything (a new run in the lab).
  reset() {
    this.close();
    for (const ch of Object.values(this.charts)) ch.clear();
    this.keys = [];
    this.data = [];
    this.markers = [];
    this.autoPorts = [];
    this.algoMetrics = new Set();
    this.qp = running();
    this.qpExact = false;
    this.fc.reset();
    const sel = document.getElementById("algo-series");
    if (sel) sel.textContent = "";
    this.setAlgoMetric("");
    for (const m of OPTIONAL) {
      const ch = this.charts[m];
      if (ch && ch.el) ch.el.hidden = true;
    }
    const stats = document.getElementById("qp-stats");
    if (stats) stats.hidden = true;
    this.showMarkers();
    this.clearSelection(); // a new run starts with the busiest ports and the first flows
  }

  // clearSelection forgets the clicked ports and host (a new run, another
  // topology: they may not exist there).
  clearSelection() {
    const ports = this.selectedPorts !== null;
    const flows = this.selectedFlows !== null;
    this.selectedPorts = null;
    this.selectedFlows = null;
    this.host = null;
    if (ports) this.rebuild("queue");
    if (flows) this.rebuild("flows");
    this.markTopology();
  }

  setFlows(flows) {
    this.flows = flows || [];
    // a selected host's flows are those of the new workload
    if (this.host) this.selectedFlows = new Set(this.flows.filter((f) => f.src === this.host || f.dst === this.host).map((f) => String(f.id)));
  }

  // flowDst is a flow's receiver, dstRates each receiver's link rate
  // (bits/s), from the validated scenario's flows.
  flowDst(entity) {
    const f = this.flows[Number(entity)];
    return f && String(f.id) === String(entity) ? f.dst : null;
  }

  dstRates() {
    const r = {};
    for (const f of this.flows) if (f.dstRateBps > 0) r[f.dst] = f.dstRateBps;
    return r;
  }

  // ---- topology interaction ----
  bindTopology() {
    const view = document.getElementById("topology-view");
    if (!view) return;
    view.addEventListener("click", (ev) => {
      const port = ev.target.closest("[data-port]");
      const host = ev.target.closest(".node.host");
      if (port) this.togglePort(port.dataset.port);
      else if (host) this.toggleHost(host.dataset.node);
    });
    view.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" && ev.key !== " ") return;
      const port = ev.target.closest("[data-port]");
      const host = ev.target.closest(".node.host");
      if (port || host) ev.preventDefault();
      if (port) this.togglePort(port.dataset.port);
      else if (host) this.toggleHost(host.dataset.node);
    });
  }

  // markTopology shows the selection on the (possibly redrawn) SVG.
  markTopology() {
    const view = document.getElementById("topology-view");
    if (!view) return;
    const ports = this.selectedPorts || new Set(this.autoPorts);
    for (const el of view.querySelectorAll("[data-port]")) {
      el.classList.toggle("selected", ports.has(el.dataset.port));
      el.setAttribute("aria-pressed", ports.has(el.dataset.port) ? "true" : "false");
    }
    for (const el of view.querySelectorAll(".node.host")) {
      el.classList.toggle("highlight", el.dataset.node === this.host);
      el.setAttribute("aria-pressed", el.dataset.node === this.host ? "true" : "false");
    }
  }

  togglePort(name) {
    if (!this.selectedPorts) this.selectedPorts = new Set(this.autoPorts);
    if (this.selectedPorts.has(name)) this.selectedPorts.delete(name);
    else this.selectedPorts.add(name);
    if (this.selectedPorts.size === 0) this.selectedPorts = null; // back to the busiest ports
    this.rebuild("queue");
  }

  toggleHost(name) {
    if (this.host === name) {
      this.host = null;
      this.selectedFlows = null;
    } else {
      this.host = name;
      this.selectedFlows = new Set(this.flows.filter((f) => f.src === name || f.dst === name).map((f) => String(f.id)));
    }
    this.rebuild("flows");
    this.fc.showPick();
  }

  // ---- which series each chart shows ----
  portShown(entity) {
    const set = this.selectedPorts || new Set(this.autoPorts);
    return set.has(entity);
  }

  flowShown(entity) {
    if (this.selectedFlows) return this.selectedFlows.has(entity);
    return this.fc.shown(entity, Number(entity) < DEFAULT_FLOWS);
  }

  flowLabel(entity) {
    const f = this.flows[Number(entity)];
    return f && String(f.id) === entity ? "flow " + entity + " " + f.src + "→" + f.dst : "flow " + entity;
  }

  chartFor(metric) {
    if (metric === "queue_bytes") return this.charts.queue_bytes;
    if (FLOW_CHARTS.includes(metric)) return this.charts[metric];
    if (metric === this.algoMetric) return this.charts.algo;
    return null;
  }

  shown(key) {
    if (key.metric === "queue_bytes") return this.portShown(key.entity);
    if (isPortMetric(key.metric)) return false;
    if (FLOW_CHARTS.includes(key.metric) || key.metric === this.algoMetric) return this.flowShown(key.entity);
    return false;
  }

  label(key) {
    return key.metric === "queue_bytes" ? key.entity : this.flowLabel(key.entity);
  }

  // colorOf: a flow keeps one colour on every chart (its id's); ports
  // take their series' order.
  colorOf(key) {
    return key.metric === "queue_bytes" || isPortMetric(key.metric) ? undefined : Number(key.entity);
  }

  // values are what a chart draws of series i from point from on: per-flow
  // throughput averaged over the stated window, else the points.
  values(key, d, from) {
    if (key.metric === "throughput_bps") return this.fc.smooth(d, from);
    return from ? d.v.slice(from) : d.v;
  }

  addKey(k) {
    this.keys[k.i] = { metric: k.metric, entity: k.entity };
    this.data[k.i] = { t: [], v: [], max: -Infinity };
    // a series without its own chart (and not a port's) is an algorithm's:
    // it joins the algorithm chart's picker
    const ownChart = k.metric === "queue_bytes" || FLOW_CHARTS.includes(k.metric);
    if (!ownChart && !isPortMetric(k.metric) && !this.algoMetrics.has(k.metric)) {
      this.algoMetrics.add(k.metric);
      const sel = document.getElementById("algo-series");
      if (sel) {
        const o = document.createElement("option");
        o.value = o.textContent = k.metric;
        o.title = help(k.metric);
        sel.appendChild(o);
        if (!this.algoMetric) { this.setAlgoMetric(k.metric); sel.value = k.metric; }
      }
    }
    // a chart shows up once its metric does (DCQCN has no window, only
    // MPCC solves QPs)
    const ch = this.charts[k.metric];
    if (ch && ch.el && ch.el.hidden) {
      ch.el.hidden = false;
    }
  }

  // add appends points of series i and draws them if shown.
  add(i, t, v) {
    const key = this.keys[i];
    const d = this.data[i];
    if (!key || !d) return;
    const from = d.t.length;
    for (let j = 0; j < t.length; j++) {
      d.t.push(t[j]);
      d.v.push(v[j]);
      if (v[j] !== null && v[j] > d.max) d.max = v[j];
      if (key.metric === "qp_solve_ns" && v[j] !== null) this.qp.add(v[j]);
    }
    const vals = this.values(key, d, from);
    const ch = this.chartFor(key.metric);
    if (ch && this.shown(key)) {
      ch.ensureSeries(this.label(key), this.label(key), this.colorOf(key));
      ch.append(this.label(key), t, vals);
    }
  }

  // afterBatch redraws, re-picks the busiest ports, and updates stats.
  afterBatch() {
    if (!this.selectedPorts) {
      const ports = [];
      this.keys.forEach((k, i) => {
        if (k && k.metric === "queue_bytes" && this.data[i].max > 0) ports.push([this.data[i].max, k.entity]);
      });
      const pick = busiest(ports, AUTO_PORTS);
      if (pick.join("|") !== this.autoPorts.join("|")) {
        this.autoPorts = pick;
        this.rebuild("queue");
      }
    }
    this.fc.update(false);
    for (const ch of Object.values(this.charts)) ch.redraw();
    if (this.qp.count() > 0 && !this.qpExact) {
      const stats = document.getElementById("qp-stats");
      if (stats) {
        stats.hidden = false;
        stats.textContent = "QP solve time so far (estimated from the charted points, " + this.qp.count() + " buckets): p50 " +
          Math.round(this.qp.p50()) + " ns, p99 " + Math.round(this.qp.p99()) + " ns";
      }
    }
    this.markTopology();
  }

  // rebuild redraws one group of charts from memory.
  rebuild(which) {
    const metrics = which === "queue" ? ["queue_bytes"] : which === "algo" ? ["algo"] : FLOW_CHARTS.concat(["algo"]);
    for (const m of metrics) {
      const ch = this.charts[m];
      if (!ch) continue;
      ch.clear();
      this.keys.forEach((k, i) => {
        if (!k) return;
        const match = m === "algo" ? k.metric === this.algoMetric : k.metric === m;
        if (match && this.shown(k)) {
          ch.ensureSeries(this.label(k), this.label(k), this.colorOf(k));
          ch.append(this.label(k), this.data[i].t, k.metric === "throughput_bps" ? this.data[i].a || this.data[i].v : this.data[i].v);
        }
      });
      for (const mk of this.markers) ch.addMarker(mk.atNs, mk.label);
      ch.redraw();
    }
    this.markTopology();
  }

  // showSummaryStats shows the run's exact solve-time statistics (every
  // solve, from summary.json) once it has ended.
  showSummaryStats(summary) {
    const st = summary && summary.series_stats && summary.series_stats.qp_solve_ns;
    const el = document.getElementById("qp-stats");
    if (!st || !el || !st.count) return;
    this.qpExact = true;
    el.hidden = false;
    el.textContent = "QP solve time over all " + st.count + " solves of the run: p50 " + Math.round(st.p50) +
      " ns, p99 " + Math.round(st.p99) + " ns, max " + Math.round(st.max) + " ns";
    el.dataset.count = String(st.count);
  }

  addMarker(atNs, params) {
    const label = Object.entries(params || {}).map(([k, v]) => k + "=" + v).join(", ");
    this.markers.push({ atNs, label });
    for (const ch of Object.values(this.charts)) { ch.addMarker(atNs, label); ch.redraw(); }
    this.showMarkers();
  }

  showMarkers() {
    document.body.dataset.markers = String(this.markers.length);
    const list = document.getElementById("markers");
    if (!list) return;
    list.textContent = "";
    for (const m of this.markers) {
      const li = document.createElement("li");
      li.textContent = m.label + " at " + fmtNs(m.atNs);
      list.appendChild(li);
    }
    list.hidden = this.markers.length === 0;
  }

  // ---- data sources ----
  onSamples(m) {
    for (const k of m.keys || []) this.addKey(k);
    for (const s of m.series || []) this.add(s.i, s.t, s.v);
    this.afterBatch();
  }

  // attach follows a run over its WebSocket; handlers get the progress,
  // status and final messages.
  attach(runId, on) {
    this.close();
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(proto + "//" + location.host + "/ws/runs/" + runId);
    this.ws = ws;
    ws.onmessage = (ev) => {
      let m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      switch (m.type) {
        case "hello": if (on.hello) on.hello(m); break;
        case "samples": this.onSamples(m); break;
        case "progress": if (on.progress) on.progress(m); break;
        case "parameter-changed":
          this.addMarker(m.atNs, m.params);
          if (on.change) on.change(m);
          break;
        case "done":
        case "failed":
          this.fc.update(true);
          if (on.done) on.done(m);
          this.close();
          break;
      }
    };
    ws.onclose = () => {
      if (this.ws === ws) {
        this.ws = null;
        if (on.closed) on.closed();
      }
    };
  }

  close() {
    if (this.ws) {
      const ws = this.ws;
      this.ws = null;
      ws.onmessage = null;
      ws.onclose = null;
      try { ws.close(); } catch (e) { /* ignore */ }
    }
  }

  // loadStored draws a stored run from the chart API (one request).
  async loadStored(runId, changes) {
    const chart = await api("GET", "/api/runs/" + runId + "/series?level=1");
    for (const s of chart.series) this.addKey({ i: s.i, metric: s.metric, entity: s.entity });
    for (const s of chart.series) this.add(s.i, s.t, s.v);
    for (const c of changes || []) this.addMarker(c.atNs, c.params);
    this.afterBatch();
    this.fc.update(true);
  }
}

