// sweep.js: a sweep's page. GET /api/sweeps/{id} gives the grid, the
// metrics (with their labels and units) and every point's mean and 95%
// interval over its seeds; the page draws the metric picked across the
// grid (a line with its band for one axis, a heatmap for two, the table for
// more) and the runs of the point picked, polling every second while the
// sweep runs. Its owner (or an instructor) may cancel or delete it.
import { api } from "./common.js";
import { bandChart } from "./charts/index.js";
import { gradient, heatColor, heatData, lineData, metricFormat, metricUnit, pointLabel, progressText, scaleOf, textOn, unchangedAxes, unchangedText } from "./sweep-view.js";

const $ = (id) => document.getElementById(id);
const data = JSON.parse($("sweep-data").textContent);
const POLL_MS = 1000;

let sweep = null; // the last answer of GET /api/sweeps/{id}
let metric = new URL(location.href).searchParams.get("metric") || "";
let selected = null; // the picked point's index
let chart = null;
let chartKey = ""; // what the chart shows, to redraw only on a change
let heatKey = "";
let tableKey = "";
let mine = !!data.mine;

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    const v = attrs[k];
    if (v == null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

function metricInfo() {
  return (sweep.metrics || []).find((m) => m.key === metric) || { key: metric, label: metric, unit: "" };
}

function seedsCount() {
  return ((sweep.spec && sweep.spec.seeds) || []).length;
}

// ---- status, progress, controls ----
function showStatus() {
  const st = $("status");
  if (st.textContent !== sweep.status) {
    st.textContent = sweep.status;
    st.className = "badge " + sweep.status;
  }
  const prog = $("sweep-progress");
  prog.max = Math.max(1, sweep.runsTotal || 0);
  prog.value = sweep.runsDone || 0;
  $("progress-text").textContent = progressText(sweep);
  if (sweep.finishedAt && sweep.status !== "running") {
    $("finished").textContent = ", ended " + new Date(sweep.finishedAt).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }
  const cancel = $("cancel-btn");
  if (cancel) cancel.hidden = sweep.status !== "running";
  if (!sweep.mine && mine) foreign();
  const b = document.body.dataset;
  b.sweep = sweep.status;
  b.runsDone = String(sweep.runsDone || 0);
  b.pointsDone = String((sweep.points || []).filter((p) => p.done >= seedsCount() && seedsCount() > 0).length);
}

// foreign drops the owner's buttons when the API says the sweep is not
// the viewer's (a cookie cleared in another tab).
function foreign() {
  mine = false;
  for (const id of ["cancel-btn", "delete-btn"]) if ($(id)) $(id).remove();
  if (!$("foreign-note")) {
    const p = h("p", { class: "notice small", id: "foreign-note" }, "This sweep belongs to someone else: you can watch it, open its runs and download its results.");
    $("control-status").closest(".toolbar").after(p);
  }
}

function bindControls() {
  const out = $("control-status");
  const act = async (fn) => {
    out.textContent = "";
    try {
      await fn();
    } catch (e) {
      if (e.status === 403) foreign();
      else out.textContent = e.message;
    }
  };
  const cancel = $("cancel-btn");
  if (cancel) {
    cancel.addEventListener("click", () => act(async () => {
      cancel.disabled = true;
      try {
        show(await api("POST", "/api/sweeps/" + encodeURIComponent(data.id) + "/cancel"));
      } finally {
        cancel.disabled = false;
      }
    }));
  }
  const del = $("delete-btn");
  if (del) {
    // a second click confirms (no modal dialog), as on the run page
    del.addEventListener("click", () => act(async () => {
      if (!del.dataset.confirm) {
        del.dataset.confirm = "1";
        del.textContent = "Really delete the sweep and its runs? Click again";
        return;
      }
      await api("DELETE", "/api/sweeps/" + encodeURIComponent(data.id));
      location.href = "/sweeps";
    }));
  }
}

// ---- the metric ----
function fillMetrics() {
  const sel = $("metric");
  const ms = sweep.metrics || [];
  if (!ms.some((m) => m.key === metric)) metric = (ms.find((m) => m.key === "fct_p99") || ms[0] || { key: "" }).key;
  if (sel.options.length !== ms.length || sel.dataset.filled !== "1") {
    sel.replaceChildren(...ms.map((m) => h("option", { value: m.key }, m.label + (m.unit ? " (" + m.unit + ")" : ""))));
    sel.dataset.filled = "1";
  }
  sel.value = metric;
  sel.disabled = ms.length === 0;
}

$("metric").addEventListener("change", () => {
  metric = $("metric").value;
  const url = new URL(location.href);
  url.searchParams.set("metric", metric);
  history.replaceState(null, "", url); // the share link keeps the metric
  render();
});

// ---- one axis: the line and its band ----
function drawLine() {
  const m = metricInfo();
  const d = lineData(sweep, metric);
  const pick = d.index.indexOf(selected);
  const key = JSON.stringify([metric, d, pick]);
  $("sweep-chart").hidden = false;
  $("sweep-empty").hidden = d.mean.some((v) => v != null);
  if (key === chartKey) return;
  chartKey = key;
  const mu = metricUnit(m.unit);
  const scale = (xs) => xs.map((v) => (v == null ? null : v * mu.mul));
  const axis = sweep.spec.axes[0];
  if (chart) chart.destroy();
  const el = $("sweep-chart");
  el.dataset.metric = metric;
  el.dataset.means = JSON.stringify(d.mean);
  el.dataset.categorical = String(d.categorical);
  chart = bandChart(el, {
    title: m.label + " against " + axis.path,
    xLabel: axis.path,
    yLabel: m.label,
    unit: mu.unit,
    onPick: (i) => select(d.index[i]),
  });
  chart.set([{ x: d.x, labels: d.labels, categorical: d.categorical, log: d.log, mean: scale(d.mean), lo: scale(d.lo), hi: scale(d.hi), selected: pick >= 0 ? pick : null }]);
}

// ---- two axes: the heatmap ----
function drawHeatmap() {
  const m = metricInfo();
  const d = heatData(sweep, metric);
  const key = JSON.stringify([metric, d, selected]);
  const box = $("sweep-heatmap");
  box.hidden = false;
  $("sweep-empty").hidden = d.min !== null;
  if (key === heatKey) return;
  heatKey = key;
  const f = metricFormat(m.unit);
  const axes = sweep.spec.axes;
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.index : undefined;
  let cells = 0;
  const over = h("tr", null, h("td", { class: "corner" }), h("th", { scope: "colgroup", colspan: d.cols.length, class: "axis-name" }, h("span", { class: "mono" }, axes[1].path), " →"));
  const head = h("tr", null, h("th", { scope: "col", class: "corner axis-name" }, h("span", { class: "mono" }, axes[0].path), " ↓"));
  for (const c of d.cols) head.append(h("th", { scope: "col", class: "mono" }, c));
  const body = d.rows.map((r, i) => {
    const tr = h("tr", null, h("th", { scope: "row", class: "mono" }, r));
    d.cols.forEach((c, j) => {
      const cell = d.cells[i][j];
      if (!cell) {
        tr.append(h("td", { class: "cell empty" }, "–"));
        return;
      }
      const t = scaleOf(cell.mean, d.min, d.max);
      const text = cell.mean == null ? "–" : f(cell.mean);
      const title = pointLabel(sweep, { values: [r, c] }) + ": " + (cell.mean == null ? "no run finished yet" : m.label + " " + text +
        (cell.n > 1 ? ", 95% interval " + f(cell.lo) + " – " + f(cell.hi) : "") + " over " + cell.n + (cell.n === 1 ? " run" : " runs"));
      const btn = h("button", {
        type: "button",
        class: "cell-btn",
        "data-index": cell.index,
        "aria-pressed": cell.index === selected ? "true" : "false",
        "aria-label": title,
        title,
        style: t === null ? "" : "background:" + heatColor(t) + ";color:" + textOn(t),
      }, text);
      if (cell.mean != null) cells++;
      const td = h("td", { class: "cell" + (cell.mean == null ? " pending" : "") + (cell.index === selected ? " selected" : ""), "data-index": cell.index, "data-mean": cell.mean == null ? "" : cell.mean }, btn);
      tr.append(td);
    });
    return tr;
  });
  const title = m.label + " (mean over the seeds) by " + axes[0].path + " and " + axes[1].path;
  const table = h("table", { class: "heatmap-table", id: "heatmap-table" },
    h("caption", { class: "sr-only" }, title),
    h("thead", null, over, head), h("tbody", null, ...body));
  const legend = h("div", { class: "heat-legend", id: "heat-legend", "aria-label": "Colour scale" },
    h("span", { class: "heat-min" }, d.min == null ? "–" : f(d.min)),
    h("span", { class: "heat-ramp", style: "background:" + gradient(), "aria-hidden": "true" }),
    h("span", { class: "heat-max" }, d.max == null ? "–" : f(d.max)),
    h("span", { class: "muted small" }, d.min == null ? "" : "(lowest to highest " + m.label + ")"));
  box.replaceChildren(h("h2", { class: "heat-title", "aria-hidden": "true" }, title),
    h("p", { class: "muted small" }, "Click a cell for its runs."), h("div", { class: "table-scroll" }, table), legend);
  box.dataset.cells = String(cells);
  box.dataset.metric = metric;
  if (focused !== undefined) {
    const again = box.querySelector('.cell-btn[data-index="' + focused + '"]');
    if (again) again.focus();
  }
}

$("sweep-heatmap").addEventListener("click", (ev) => {
  const b = ev.target.closest(".cell-btn");
  if (b) select(Number(b.dataset.index));
});

// ---- the table of every point ----
function drawTable() {
  const m = metricInfo();
  const f = metricFormat(m.unit);
  const key = JSON.stringify([metric, sweep.points.map((p) => [p.done, p.metrics[metric]]), selected]);
  if (key === tableKey) return;
  tableKey = key;
  $("points-metric-h").textContent = m.label;
  const n = seedsCount();
  const rows = (sweep.points || []).map((p) => {
    const s = p.metrics && p.metrics[metric];
    const has = s && s.n > 0;
    const tr = h("tr", { "data-index": p.index, tabindex: "0", class: "pick" + (p.index === selected ? " selected" : ""), "aria-selected": p.index === selected ? "true" : "false" },
      h("td", null, String(p.index)),
      ...p.values.map((v) => h("td", { class: "mono" }, v)),
      h("td", null, p.done + " / " + n),
      h("td", { class: "num" }, has ? f(s.mean) : "–"),
      h("td", { class: "num" }, has && s.n > 1 ? f(s.lo) + " – " + f(s.hi) : "–"));
    return tr;
  });
  const body = $("points-table").tBodies[0];
  const focused = body.contains(document.activeElement) ? document.activeElement.closest("tr[data-index]") : null;
  body.replaceChildren(...rows);
  if (focused) {
    // a row kept focus while the sweep filled in
    const again = body.querySelector('tr[data-index="' + focused.dataset.index + '"]');
    if (again) again.focus();
  }
}

$("points-table").addEventListener("click", (ev) => {
  const tr = ev.target.closest("tr[data-index]");
  if (tr) select(Number(tr.dataset.index));
});
$("points-table").addEventListener("keydown", (ev) => {
  if (ev.key !== "Enter" && ev.key !== " ") return;
  const tr = ev.target.closest("tr[data-index]");
  if (!tr) return;
  ev.preventDefault();
  select(Number(tr.dataset.index));
});

// ---- the picked point's runs ----
function select(index) {
  selected = index;
  render();
  $("point-runs").scrollIntoView({ block: "nearest" });
}

function drawRuns() {
  const sec = $("point-runs");
  const p = (sweep.points || []).find((x) => x.index === selected);
  if (!p) {
    sec.hidden = true;
    return;
  }
  sec.hidden = false;
  sec.dataset.index = String(p.index);
  $("point-h").textContent = "Runs of point " + p.index + ": " + pointLabel(sweep, p);
  const m = metricInfo();
  const f = metricFormat(m.unit);
  const s = p.metrics && p.metrics[metric];
  $("point-stat").textContent = s && s.n > 0
    ? m.label + ": " + f(s.mean) + (s.n > 1 ? " (95% interval " + f(s.lo) + " – " + f(s.hi) + ")" : "") + ", over " + s.n + (s.n === 1 ? " run" : " runs") + "."
    : m.label + ": no run of this point has finished yet.";
  const seeds = sweep.spec.seeds || [];
  const rows = (p.runs || []).map((run, k) => {
    const st = (p.statuses || [])[k] || (run ? "" : "pending");
    return h("tr", { "data-run": run || "" },
      h("td", null, String(seeds[k] == null ? k + 1 : seeds[k])),
      h("td", null, h("span", { class: "badge " + st }, st || "missing")),
      h("td", null, run ? h("a", { href: "/r/" + encodeURIComponent(run), class: "run-link" }, "run " + run) : h("span", { class: "muted" }, "not started")));
  });
  $("point-runs-table").tBodies[0].replaceChildren(...rows);
  const made = (p.runs || []).filter(Boolean);
  const cmp = $("point-compare");
  cmp.hidden = made.length < 2;
  cmp.href = "/compare?runs=" + made.join(",");
}

// ---- a hint: an axis that changed nothing ----
function showUnchanged() {
  let el = $("sweep-unchanged");
  const text = unchangedText(unchangedAxes(sweep));
  if (!text) {
    if (el) el.hidden = true;
    return;
  }
  if (!el) {
    el = h("p", { id: "sweep-unchanged", class: "notice", role: "note" });
    $("sweep-view").prepend(el);
  }
  el.textContent = text;
  el.hidden = false;
}

// ---- everything ----
function render() {
  if (!sweep) return;
  fillMetrics();
  showUnchanged();
  const axes = (sweep.spec && sweep.spec.axes) || [];
  $("sweep-view").dataset.axes = String(axes.length);
  if (axes.length === 1) drawLine();
  else if (axes.length === 2) drawHeatmap();
  else $("sweep-empty").hidden = (sweep.points || []).some((p) => p.done > 0);
  drawTable();
  drawRuns();
  document.body.dataset.charts = "ready";
}

function show(sw) {
  sweep = sw;
  showStatus();
  render();
}

let timer = null;
async function poll() {
  clearTimeout(timer);
  try {
    const sw = await api("GET", "/api/sweeps/" + encodeURIComponent(data.id));
    show(sw);
    if (sw.status === "running") timer = setTimeout(poll, POLL_MS);
  } catch (e) {
    if (e.status === 404) {
      $("control-status").textContent = "This sweep no longer exists.";
      return;
    }
    $("control-status").textContent = "Lost the server (" + e.message + "); trying again…";
    timer = setTimeout(() => { $("control-status").textContent = ""; poll(); }, 2 * POLL_MS);
  }
}

bindControls();
poll();
