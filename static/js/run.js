// run.js: the run page: the run's charts (stored, or live if it is still
// going), its FCT-by-size and queue-CDF charts.
import { api } from "./common.js";
import { cdfChart, sizeChart } from "./charts/index.js";
import { RunView } from "./runview.js";
import { sizeLabels } from "./vocabulary.js";

const data = JSON.parse(document.getElementById("run-data").textContent);
const view = new RunView();

function drawSummary(summary) {
  if (!summary) return;
  const sizesEl = document.getElementById("chart-sizes");
  if (sizesEl && summary.fct_slowdown_by_size) {
    const b = summary.fct_slowdown_by_size;
    const pick = (k) => b.map((x) => (x.count > 0 ? x[k] : null));
    sizeChart(sizesEl, { title: "FCT slowdown by flow size", buckets: sizeLabels() })
      .set([{ label: "this run", p50: pick("p50"), p95: pick("p95"), p99: pick("p99") }]);
  }
  const cdfEl = document.getElementById("chart-cdf");
  if (cdfEl && summary.switch_queues && summary.switch_queues.cdf) {
    cdfChart(cdfEl, { title: "Queue length over all switch ports (CDF, time-weighted)", xUnit: "bytes", logX: true })
      .set([{ label: "this run", points: summary.switch_queues.cdf }]);
  }
}

async function main() {
  const run = await api("GET", "/api/runs/" + data.id);
  try {
    const v = await api("POST", "/api/scenarios/validate", run.scenario);
    view.setFlows(v.flows);
  } catch (e) { /* the flows are only for highlighting */ }
  const status = document.getElementById("status");
  if (data.terminal) {
    await view.loadStored(data.id, run.changes);
    drawSummary(run.summary);
    view.showSummaryStats(run.summary);
    document.body.dataset.charts = "ready";
    return;
  }
  view.attach(data.id, {
    progress: (p) => { status.textContent = p.status; status.className = "badge " + p.status; },
    done: () => { location.reload(); },
  });
}
main().catch((e) => {
  const p = document.createElement("p");
  p.className = "errors";
  p.textContent = "Could not load the run: " + e.message;
  document.getElementById("main").prepend(p);
});
