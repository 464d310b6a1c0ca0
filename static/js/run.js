// run.js: the run page: the run's charts (stored, or live if it is still
// going), its FCT-by-size and queue-CDF charts, and, for whoever may change
// the run (its owner, or an instructor), its controls.
import { api } from "./common.js";
import { cdfChart, sizeChart } from "./charts/index.js";
import { RunView } from "./runview.js";
import { sizeLabels } from "./vocabulary.js";
import { drawConvergence, drawSlowdownCdf } from "./runanalysis.js";
import { changeText, simTime, simulatedText, timeNs } from "./guide.js";

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

const $ = (id) => document.getElementById(id);

// foreign replaces the controls by the note when the run turns out not to
// be the viewer's (the page was rendered for them, but the API says
// otherwise: a cookie cleared in another tab)
function foreign() {
  const box = $("run-controls");
  if (!box) return;
  const p = document.createElement("p");
  p.className = "notice";
  p.id = "foreign-note";
  p.textContent = "This run belongs to someone else: you can watch and compare it.";
  box.replaceWith(p);
}

// bindControls wires the owner's (or an instructor's) buttons; each one
// acts through the API and reports a refusal next to them.
function bindControls() {
  const box = $("run-controls");
  if (!box) return;
  const out = $("control-status");
  const act = async (fn) => {
    out.textContent = "";
    try {
      return await fn();
    } catch (e) {
      if (e.status === 403) foreign();
      else out.textContent = e.message;
      return null;
    }
  };
  const pause = $("pause-btn");
  if (pause) {
    pause.addEventListener("click", () => act(async () => {
      const what = pause.textContent.trim() === "Resume" ? "resume" : "pause";
      const r = await api("POST", "/api/runs/" + data.id + "/" + what);
      showStatus(r.status);
    }));
  }
  const stop = $("stop-btn");
  if (stop) {
    stop.addEventListener("click", () => act(async () => {
      stop.disabled = true;
      const r = await api("POST", "/api/runs/" + data.id + "/cancel");
      showStatus(r.status);
      location.reload(); // the ended run's page: its downloads
    }).finally(() => { stop.disabled = false; }));
  }
  const speed = $("speed");
  if (speed) {
    speed.addEventListener("change", () => act(() =>
      api("POST", "/api/runs/" + data.id + "/speed", { speed: speed.value === "max" ? "max" : Number(speed.value) })));
  }
  const pin = $("pin-btn");
  pin.addEventListener("click", () => act(async () => {
    const on = pin.getAttribute("aria-pressed") !== "true";
    const r = await api("POST", "/api/runs/" + data.id + (on ? "/pin" : "/unpin"));
    pin.setAttribute("aria-pressed", r.pinned ? "true" : "false");
  }));
  const del = $("delete-btn");
  if (del) {
    // a second click confirms (no modal dialog)
    del.addEventListener("click", () => act(async () => {
      if (!del.dataset.confirm) {
        del.dataset.confirm = "1";
        del.textContent = "Really delete? Click again";
        return;
      }
      await api("DELETE", "/api/runs/" + data.id);
      location.href = "/";
    }));
  }
}

// showSweep says which sweep the run is one point and seed of, and links
// to it.
function showSweep(id) {
  const p = document.createElement("p");
  p.id = "sweep-note";
  const a = document.createElement("a");
  a.href = "/sweeps/" + encodeURIComponent(id);
  a.textContent = "sweep " + id;
  p.append("One run of ", a, ": its other points and seeds, and the metrics across them, are there.");
  document.querySelector("#main > p").after(p);
}

// showSimulated puts "1.2 ms of 10 ms simulated" beside a live run's status
// (the total when the scenario has a duration).
function showSimulated(simNs, totalNs) {
  let el = $("progress-text");
  if (!el) {
    el = document.createElement("span");
    el.id = "progress-text";
    el.className = "muted";
    el.setAttribute("aria-live", "off");
    $("status").after(" ", el);
  }
  el.textContent = simulatedText(simNs || 0, totalNs);
}

// showChange adds a live change made while the page is open to the
// change table, as the server writes it after a reload ("ai: 20 → 40" at
// its simulated time); the parameters above then are those at the start.
const current = Object.assign({}, data.current || {});
// (the stream replays every change from the first: those up to
// data.changes are in the table already, seq counting from 1)
let shown = data.changes || 0;
function showChange(m) {
  const table = $("changes-table");
  if (!table || !(m.seq > shown)) return;
  shown = m.seq;
  const tr = document.createElement("tr");
  const at = document.createElement("td");
  at.textContent = simTime(m.atNs * 1e3);
  const what = document.createElement("td");
  what.textContent = changeText(current, m.params || {});
  tr.append(at, what);
  table.tBodies[0].append(tr);
  table.hidden = false;
  $("changes-h").hidden = false;
  const h = $("params-h");
  if (h) h.textContent = "Parameters at the start";
}

function showStatus(st) {
  const status = $("status");
  if (status.textContent !== st) {
    status.textContent = st;
    status.className = "badge " + st;
  }
  const pause = $("pause-btn");
  if (pause) {
    pause.textContent = st === "paused" ? "Resume" : "Pause";
    pause.disabled = st === "queued";
  }
}

async function main() {
  bindControls();
  const run = await api("GET", "/api/runs/" + data.id);
  if (!run.mine) foreign();
  if (run.sweep) showSweep(run.sweep);
  try {
    const v = await api("POST", "/api/scenarios/validate", run.scenario);
    view.setFlows(v.flows);
  } catch (e) { /* the flows are only for highlighting */ }
  if (data.terminal) {
    await view.loadStored(data.id, run.changes);
    drawSummary(run.summary);
    view.showSummaryStats(run.summary);
    drawConvergence(view);
    await drawSlowdownCdf(data.id).catch(() => {});
    document.body.dataset.charts = "ready";
    return;
  }
  view.attach(data.id, {
    hello: (m) => { if (m.run && !m.run.mine) foreign(); },
    progress: (p) => {
      showStatus(p.status);
      showSimulated(p.simNs, timeNs(run.scenario && run.scenario.duration));
      // the run's own pace (another tab may have changed it)
      const sp = $("speed");
      const want = p.speed === "max" || p.speed === undefined ? "max" : String(p.speed);
      if (sp && document.activeElement !== sp && sp.value !== want && [...sp.options].some((o) => o.value === want)) sp.value = want;
    },
    change: showChange,
    done: () => { location.reload(); },
  });
}
main().catch((e) => {
  const p = document.createElement("p");
  p.className = "errors";
  p.textContent = "Could not load the run: " + e.message;
  document.getElementById("main").prepend(p);
});
