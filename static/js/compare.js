// compare.js: overlaid charts of the compared runs: the largest queue of
// any switch port and the total throughput over time, FCT slowdown by flow
// size, and the switch queue CDF; then each run's per-flow throughput as
// the run page draws it (flowcharts.js: a trailing mean over the window its
// title states, the top flows by bytes, each flow in its id's colour, so
// flow 3 has one colour in every run's chart).
import { api } from "./common.js";
import { cdfChart, fmt, sizeChart, timeChart } from "./charts/index.js";
import { aggregate, bytesOf, movingAverage, topFlows } from "./charts/flowstats.js";
import { TOP_FLOWS, throughputTitle, windowOf } from "./flowcharts.js";
import { sizeLabels, unit } from "./vocabulary.js";

const ids = JSON.parse(document.getElementById("compare-data").textContent).runs.split(",").filter(Boolean);

// combine folds the series of one metric into one: at each time, the
// largest (queues) or the sum (throughput).
function combine(series, how) {
  const acc = new Map();
  for (const s of series) {
    for (let j = 0; j < s.t.length; j++) {
      const v = s.v[j];
      if (v === null) continue;
      const cur = acc.get(s.t[j]);
      acc.set(s.t[j], cur === undefined ? v : how === "max" ? Math.max(cur, v) : cur + v);
    }
  }
  const t = Array.from(acc.keys()).sort((a, b) => a - b);
  return { t, v: t.map((x) => acc.get(x)) };
}

// while a compared run is queued or running, poll it, and reload once
// when every one has ended (a paused run does not keep the page busy)
const live = ["queued", "running"];
const pending = Array.from(document.querySelectorAll("#compare-table thead .badge")).some((b) => live.includes(b.textContent.trim()));
if (pending) {
  const poll = async () => {
    try {
      const states = await Promise.all(ids.map((id) => api("GET", "/api/runs/" + id).then((r) => r.status)));
      if (!states.some((st) => live.includes(st))) { location.reload(); return; }
    } catch (e) { /* try again */ }
    setTimeout(poll, 2000);
  };
  setTimeout(poll, 2000);
}

// algorithms "run with every algorithm" could not start
let refused = [];
try { refused = JSON.parse(sessionStorage.getItem("cclab-refused") || "[]"); } catch (e) { /* ignore */ }
sessionStorage.removeItem("cclab-refused");
if (refused.length) {
  const p = document.createElement("p");
  p.className = "notice";
  p.id = "refused";
  p.textContent = "Not run: " + refused.join("; ");
  document.querySelector("h1").after(p);
}

// legendLabel names a run in the charts as its column does (the algorithm,
// and what tells apart runs of one algorithm), with its id's start when
// two columns read the same.
function legendLabel(r, runs) {
  const cols = Array.from(document.querySelectorAll("#compare-table thead .col-label")).map((a) => a.textContent.trim());
  const i = runs.indexOf(r);
  const name = cols[i] || r.algorithm;
  return cols.filter((c) => c === name).length > 1 || !cols[i] ? name + " " + r.id.slice(0, 6) : name;
}

async function main() {
  const runs = await Promise.all(ids.map((id) => api("GET", "/api/runs/" + id)));
  const label = (r) => legendLabel(r, runs);
  const queue = timeChart(document.getElementById("cmp-queue"), { title: "Largest switch-port queue", unit: unit("queue_bytes") });
  const sizes = [];
  const cdfs = [];
  const flowsOf = []; // per run: its throughput series and flows
  for (const r of runs) {
    // switch ports: those whose node is not a host of the run
    let hosts = new Set();
    let flows = [];
    try {
      const v = await api("POST", "/api/scenarios/validate", r.scenario);
      hosts = new Set(v.hosts || []);
      flows = v.flows || [];
    } catch (e) { /* all ports then */ }
    const q = await api("GET", "/api/runs/" + r.id + "/series?level=1&metric=queue_bytes");
    const qc = combine(q.series.filter((s) => !hosts.has(s.entity.split("->")[0])), "max");
    queue.ensureSeries(label(r), label(r));
    queue.append(label(r), qc.t, qc.v);
    const th = await api("GET", "/api/runs/" + r.id + "/series?level=1&metric=throughput_bps");
    flowsOf.push({ r, flows, series: th.series });
    const s = r.summary;
    if (s && s.fct_slowdown_by_size) {
      const pick = (k) => s.fct_slowdown_by_size.map((x) => (x.count > 0 ? x[k] : null));
      sizes.push({ label: label(r), p50: pick("p50"), p95: pick("p95"), p99: pick("p99") });
    }
    if (s && s.switch_queues && s.switch_queues.cdf) cdfs.push({ label: label(r), points: s.switch_queues.cdf });
  }
  queue.redraw();
  // one averaging window for every run (the widest of theirs), so the
  // charts compare like with like and the titles state one window
  const windowNs = Math.max(0, ...flowsOf.map((x) => windowOf(x.series)));
  const tputEl = document.getElementById("cmp-tput");
  tputEl.dataset.windowNs = String(windowNs);
  const tput = timeChart(tputEl, { title: "Total throughput (the sum of the per-flow means over the last " + fmt.ns(windowNs) + ")", unit: unit("throughput_bps") });
  const box = document.getElementById("cmp-flows");
  for (const { r, flows, series } of flowsOf) {
    for (const s of series) s.a = windowNs ? movingAverage(s.t, s.v, windowNs) : s.v;
    const agg = aggregate(series.map((s) => ({ t: s.t, v: s.a })), null);
    tput.ensureSeries(label(r), label(r));
    tput.append(label(r), agg.map((a) => a.t), agg.map((a) => a.total));
    // the run's top flows by bytes, each in its id's colour
    const top = new Set(topFlows(new Map(series.map((s) => [s.entity, bytesOf(s.t, s.v)])), TOP_FLOWS));
    const el = document.createElement("div");
    el.className = "chart cmp-flow-chart";
    el.dataset.run = r.id;
    el.dataset.windowNs = String(windowNs);
    box.append(el);
    const ch = timeChart(el, { title: label(r) + ": " + throughputTitle(windowNs) + (series.length > top.size ? ", the top " + top.size + " of " + series.length + " flows by bytes" : ""), unit: unit("throughput_bps"), height: 220 });
    for (const s of series.filter((x) => top.has(x.entity)).sort((a, b) => Number(a.entity) - Number(b.entity))) {
      const f = flows.find((x) => String(x.id) === s.entity);
      const name = "flow " + s.entity + (f ? " " + f.src + "→" + f.dst : "");
      ch.ensureSeries(s.entity, name, Number(s.entity));
      ch.append(s.entity, s.t, s.a);
    }
    ch.redraw();
  }
  tput.redraw();
  sizeChart(document.getElementById("cmp-sizes"), { title: "FCT slowdown by flow size", buckets: sizeLabels() }).set(sizes);
  cdfChart(document.getElementById("cmp-cdf"), { title: "Switch queue CDF", xUnit: "bytes", logX: true }).set(cdfs);
  document.body.dataset.charts = "ready";
}
main().catch((e) => {
  const p = document.createElement("p");
  p.className = "errors";
  p.textContent = "Could not load the runs: " + e.message;
  document.getElementById("main").prepend(p);
});
