// runanalysis.js: the run page's flow analyses of a finished run: the FCT
// slowdown CDF (all flows and per size bucket, from flows.csv) and how long
// each flow took to converge to its fair share (from the charted
// throughput). The arithmetic is in charts/flowstats.js.
import { cdfChart, fmt } from "./charts/index.js";
import { CONVERGE_HOLD_POINTS, CONVERGE_TOL, convergence, parseCsv, slowdownCdfs } from "./charts/flowstats.js";
import { sizeBuckets } from "./vocabulary.js";

const MAX_ROWS = 20;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  e.append(...kids);
  return e;
}

// drawSlowdownCdf adds the FCT slowdown CDF under the size chart.
export async function drawSlowdownCdf(runId) {
  const after = document.getElementById("chart-sizes");
  if (!after) return;
  const resp = await fetch("/api/runs/" + encodeURIComponent(runId) + "/flows.csv");
  if (!resp.ok) return;
  const rows = parseCsv(await resp.text())
    .filter((r) => r.slowdown !== "" && r.slowdown != null)
    .map((r) => ({ size: Number(r.size_bytes), slowdown: Number(r.slowdown) }))
    .filter((r) => Number.isFinite(r.slowdown) && r.slowdown > 0);
  const note = el("p", { class: "muted small", id: "slowdown-note" });
  after.after(note);
  if (!rows.length) {
    note.textContent = "No flow finished, so there is no FCT slowdown CDF.";
    return;
  }
  note.textContent = "The share of finished flows (y) whose FCT slowdown is at most x, over all " + rows.length + " and per flow-size bucket.";
  const box = el("div", { class: "chart", id: "chart-slowdown-cdf" });
  note.before(box);
  box.dataset.flows = String(rows.length);
  cdfChart(box, { title: "FCT slowdown CDF (finished flows, all and per size bucket)", logX: true, xLabel: "FCT slowdown (FCT ÷ ideal FCT)" })
    .set(slowdownCdfs(rows, sizeBuckets()));
}

// drawConvergence adds the convergence table after the aggregate charts.
export function drawConvergence(view) {
  const anchor = document.getElementById("aggregates");
  if (!anchor) return;
  const win = view.fc.windowNs;
  const spacing = view.fc.spacingNs || 0; // the chart bucket
  const series = [];
  view.keys.forEach((k, i) => {
    if (k && k.metric === "throughput_bps") {
      const d = view.data[i];
      series.push({ key: k.entity, dst: view.flowDst(k.entity), t: d.t, v: d.a || d.v });
    }
  });
  const rates = view.dstRates();
  const res = convergence(series, rates).sort((a, b) => a.start - b.start || Number(a.key) - Number(b.key));
  const sec = el("section", { id: "convergence", "aria-labelledby": "conv-h" }, el("h3", { id: "conv-h" }, "Convergence to the fair share"));
  sec.append(el("p", { class: "muted small", id: "conv-def" },
    "A flow has converged at the first time after its start from which its throughput (mean over the last " + fmt.ns(win) +
    ") stays within ±" + Math.round(CONVERGE_TOL * 100) + "% of its fair share for " + CONVERGE_HOLD_POINTS + " chart points (" +
    fmt.ns(CONVERGE_HOLD_POINTS * spacing) + "); its fair share is the rate of the link into its receiver ÷ the flows into that receiver active then. " +
    "Time to converge = that time − the flow's first sample."));
  const done = res.filter((r) => r.time != null).map((r) => r.time).sort((a, b) => a - b);
  const summary = res.length === 0 ? "No flow throughput was charted." :
    done.length + " of " + res.length + " flows converged" +
    (done.length ? ": median " + fmt.ns(done[Math.floor((done.length - 1) / 2)]) + ", slowest " + fmt.ns(done[done.length - 1]) + "." : ".");
  sec.append(el("p", { id: "conv-summary" }, summary));
  sec.dataset.flows = String(res.length);
  sec.dataset.converged = String(done.length);
  if (res.length) {
    const tbody = el("tbody");
    for (const r of res.slice(0, MAX_ROWS)) {
      tbody.append(el("tr", {}, el("th", { scope: "row" }, view.flowLabel(r.key)), el("td", {}, fmt.ns(r.start)),
        el("td", {}, r.at == null ? "never" : fmt.ns(r.at)), el("td", {}, r.time == null ? "—" : fmt.ns(r.time))));
    }
    const table = el("table", { class: "table", id: "conv-table" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "flow"), el("th", { scope: "col" }, "first sample"),
        el("th", { scope: "col" }, "converged at"), el("th", { scope: "col" }, "time to converge"))), tbody);
    sec.append(el("div", { class: "table-scroll" }, table));
    if (res.length > MAX_ROWS) sec.append(el("p", { class: "muted small" }, "The first " + MAX_ROWS + " flows by start of " + res.length + "."));
  }
  anchor.after(sec);
}
