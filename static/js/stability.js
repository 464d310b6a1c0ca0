// stability.js: the stability lab. Every slider change asks the server for
// the QCN fluid model's margins, frequency response, roots and fluid runs
// (POST /api/stability/qcn) and redraws; the packet overlay runs the Fig. 9
// scenarios as ordinary lab runs (POST /api/runs) and draws their queue
// beside the fluid one.
import { api } from "./common.js";
import { color, xyChart } from "./charts/index.js";

const data = JSON.parse(document.getElementById("stability-data").textContent);
const $ = (id) => document.getElementById(id);
const sliders = new Map(data.sliders.map((s) => [s.name, s]));

const charts = {
  mag: xyChart($("chart-bode-mag"), { title: "Bode: gain", xLabel: "ω (rad/s)", yLabel: "dB", logX: true }),
  phase: xyChart($("chart-bode-phase"), { title: "Bode: phase", xLabel: "ω (rad/s)", yLabel: "degrees", logX: true }),
  q: xyChart($("chart-fluid-q"), { title: "Fluid model: queue", xLabel: "time (ms)", yLabel: "packets" }),
  rate: xyChart($("chart-fluid-rate"), { title: "Fluid model: QCN's rates per source", xLabel: "time (ms)", yLabel: "Gbps" }),
  overlay: xyChart($("chart-overlay"), { title: "Queue: fluid model vs packet engine", xLabel: "time (ms)", yLabel: "packets" }),
  sweep: xyChart($("chart-sweep"), { title: "Delay margins", xLabel: "", yLabel: "µs" }),
  dcqcn: xyChart($("chart-dcqcn"), { title: "DCQCN fluid model: queue", xLabel: "time (ms)", yLabel: "KB" }),
  ap: xyChart($("chart-ap"), { title: "Unit-step response", xLabel: "time (s)", yLabel: "y" }),
  rcp: xyChart($("chart-rcp"), { title: "RCP: total sending rate", xLabel: "time (s)", yLabel: "Gbps" }),
};

const apPaper = { standard: "unstable at 8 s (Fig. 3b)", ap: "stable up to 15 s", pd: "essentially identical to AP (Fig. 11)", "pd-dither": "equal to AP (Theorem 4)" };
const rcpPaper = { rcp: "stable at 110, unstable at 115 ms", "ap-rcp": "stable at 240, unstable at 250 ms", "ap2-rcp": "stable at 480 ms", "pd-rcp": "like AP-RCP (Fig. 14)" };

function fillTable(id, rows) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement("tr");
    tr.dataset.name = r[0];
    for (const c of r) tr.append(Object.assign(document.createElement("td"), { textContent: c }));
    return tr;
  }));
}

async function apRun() {
  const btn = $("ap-run");
  btn.disabled = true;
  try {
    const ans = await api("POST", "/api/stability/ap", { config: { k: Number($("ap-k").value) }, step: { delay: Number($("ap-delay").value), duration: 80 } });
    fillTable("ap-margins", ans.margins.map((m) => [m.name, m.maxStableDelayS.toFixed(2) + " s", apPaper[m.name] || ""]));
    const names = { standard: "standard", ap: "AP", pd: "PD" };
    charts.ap.set(Object.keys(names).map((k) => ({ label: names[k], points: pts(ans.steps[k].t, ans.steps[k].y) })));
  } catch (e) {
    fillTable("ap-margins", [[(e.body && e.body.field ? e.body.field + ": " : "") + e.message, "", ""]]);
  } finally {
    btn.disabled = false;
  }
}

async function rcpRun() {
  const btn = $("rcp-run");
  btn.disabled = true;
  try {
    const ans = await api("POST", "/api/stability/rcp", { trace: { rtt: Number($("rcp-rtt").value) / 1e3, duration: 30 } });
    fillTable("rcp-margins", ans.margins.map((m) => [m.name, m.maxStableRttMs.toFixed(0) + " ms", rcpPaper[m.name] || ""]));
    charts.rcp.set(["rcp", "ap-rcp", "ap2-rcp", "pd-rcp"].map((k) => ({ label: k, points: pts(ans.traces[k].t, ans.traces[k].rate.map((v) => v / 1e9)) })));
  } catch (e) {
    fillTable("rcp-margins", [[(e.body && e.body.field ? e.body.field + ": " : "") + e.message, "", ""]]);
  } finally {
    btn.disabled = false;
  }
}

function params() {
  const p = {};
  for (const el of document.querySelectorAll("#stability-params input[data-param]")) {
    p[el.dataset.param] = Number(el.value);
  }
  return p;
}

function show(name) {
  const s = sliders.get(name);
  const v = Number($("p-" + name).value) / s.scale;
  $("o-" + name).textContent = (s.int ? String(Math.round(v)) : String(Number(v.toPrecision(4)))) + (s.unit ? " " + s.unit : "");
}

const us = (x) => x.toFixed(1) + " µs";
const pts = (xs, ys, f) => xs.map((x, i) => [f ? f(x) : x, ys[i]]);
const level = (x0, x1, y) => [[x0, y], [x1, y]];

function drawMargins(m) {
  $("m-tauStar").textContent = us(m.tauStarUs);
  $("m-tauStarPrinted").textContent = us(m.tauStarPrintedUs);
  $("m-exact").textContent = us(m.exactMarginUs);
  $("m-tauHat").textContent = us(m.tauHatUs);
  $("m-pm").textContent = m.phaseMarginDeg.toFixed(1) + "°";
  const word = (b) => (b ? "stable" : "unstable");
  $("m-verdict").textContent = `RTT ${m.rttUs.toFixed(0)} µs: the linear QCN loop is ${word(m.stableQcn)}, the linear QCN-AIMD loop is ${word(m.stableQcnAimd)}.`;
  $("m-verdict").dataset.qcn = word(m.stableQcn);
  $("m-th3").textContent = `(23) ${m.theorem3Lhs23.toPrecision(3)} < 0.1 ${m.theorem3Lhs23 < 0.1 ? "holds" : "fails"}; ` +
    `(24) N·R_AI/C = ${m.theorem3Lhs24.toPrecision(3)} < 0.2 ${m.theorem3Lhs24 < 0.2 ? "holds" : "fails"}; ` +
    `averaging helps (τ* > τ̂): ${m.averagingHelps ? "yes" : "no"}.`;
}

function drawNyquist(bode) {
  // an SVG of Re/Im near −1 (uPlot wants x sorted; a Nyquist curve is not)
  const W = 360, H = 300, R = 3; // the view spans −R..R/2 on Re, ±R·H/W... on Im
  const x0 = -R, x1 = R / 2, y0 = -(x1 - x0) * H / W / 2, y1 = -y0;
  const sx = (x) => ((x - x0) / (x1 - x0)) * W, sy = (y) => H - ((y - y0) / (y1 - y0)) * H;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "nyquist-plot");
  const add = (tag, attrs) => { const e = document.createElementNS(ns, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); svg.append(e); return e; };
  add("line", { x1: 0, y1: sy(0), x2: W, y2: sy(0), stroke: "#999", "stroke-width": 1 });
  add("line", { x1: sx(0), y1: 0, x2: sx(0), y2: H, stroke: "#999", "stroke-width": 1 });
  add("path", { d: `M${sx(-1) - 6},${sy(0) - 6}l12,12m0,-12l-12,12`, stroke: "#000", "stroke-width": 2 });
  const names = { qcn: "QCN G(jω)", qcn_aimd: "QCN-AIMD Ĝ(jω)" };
  Object.keys(names).forEach((k, i) => {
    const f = bode[k];
    const d = [];
    for (let j = 0; j < f.re.length; j++) {
      const x = Math.max(x0 - 1, Math.min(x1 + 1, f.re[j])), y = Math.max(y0 - 1, Math.min(y1 + 1, f.im[j]));
      d.push((d.length ? "L" : "M") + sx(x).toFixed(1) + "," + sy(y).toFixed(1));
    }
    add("path", { d: d.join(""), fill: "none", stroke: color(i), "stroke-width": 2, "stroke-dasharray": i ? "6 3" : "" });
    const t = add("text", { x: 8, y: 16 + 16 * i, fill: color(i), "font-size": 13 });
    t.textContent = names[k] + (f.nyquistEncircles ? ": passes left of −1 (unstable)" : ": right of −1 (stable)");
  });
  $("chart-nyquist").replaceChildren(svg);
}

let fluidLast = null;

function draw(ans) {
  drawMargins(ans.margins);
  const b = ans.bode;
  const lo = b.qcn.omega[0], hi = b.qcn.omega[b.qcn.omega.length - 1];
  charts.mag.set([
    { label: "QCN |G|", points: pts(b.qcn.omega, b.qcn.magDb) },
    { label: "QCN-AIMD |Ĝ|", points: pts(b.qcn_aimd.omega, b.qcn_aimd.magDb) },
    { label: "0 dB", points: level(lo, hi, 0), color: "#777", dash: [2, 4], width: 1 },
  ]);
  charts.phase.set([
    // the delay's phase grows without bound: show down to −720°
    { label: "QCN ∠G", points: pts(b.qcn.omega, b.qcn.phaseDeg).filter((p) => p[1] >= -720) },
    { label: "QCN-AIMD ∠Ĝ", points: pts(b.qcn_aimd.omega, b.qcn_aimd.phaseDeg).filter((p) => p[1] >= -720) },
    { label: "−180°", points: level(lo, hi, -180), color: "#777", dash: [2, 4], width: 1 },
  ]);
  drawNyquist(b);
  const fmtRoot = (r) => `${r.re.toPrecision(3)} ${r.im >= 0 ? "±" : "−"} ${Math.abs(r.im).toPrecision(3)}j`;
  $("roots").textContent = ["qcn", "qcn_aimd"].map((k) => (k === "qcn" ? "QCN " : "QCN-AIMD ") + (ans.roots[k].slice(0, 3).map(fmtRoot).join(", ") || "none found")).join("; ");
  const f = ans.fluid, ms = (t) => t * 1e3;
  const errs = ["qcn", "qcn_aimd"].filter((k) => f[k].error).map((k) => f[k].error);
  $("fluid-error").hidden = errs.length === 0;
  $("fluid-error").textContent = errs.join(" ");
  const end = ms(f.qcn.t[f.qcn.t.length - 1] || 0.05);
  fluidLast = f;
  charts.q.set([
    { label: "QCN", points: pts(f.qcn.t, f.qcn.q, ms) },
    { label: "QCN-AIMD", points: pts(f.qcn_aimd.t, f.qcn_aimd.q, ms) },
    { label: "Q*", points: level(0, end, ans.fixedPoint.qcn.q), color: color(0), dash: [6, 4], width: 1 },
    { label: "Q̂", points: level(0, end, ans.fixedPoint.qcn_aimd.q), color: color(1), dash: [6, 4], width: 1 },
  ]);
  const gbps = (v) => (v * 8 * ans.params.packet) / 1e9;
  charts.rate.set([
    { label: "R_C", points: f.qcn.t.map((t, i) => [ms(t), gbps(f.qcn.rc[i])]) },
    { label: "R_T", points: f.qcn.t.map((t, i) => [ms(t), gbps(f.qcn.rt[i])]) },
    { label: "C/N", points: level(0, end, gbps(ans.fixedPoint.qcn.rc)), color: "#777", dash: [2, 4], width: 1 },
  ]);
}

let seq = 0;
let timer = null;
async function update() {
  const mine = ++seq;
  $("stability-status").textContent = "computing…";
  try {
    const ans = await api("POST", "/api/stability/qcn", { params: params(), points: 200 });
    if (mine !== seq) return; // a newer request is on its way
    draw(ans);
    $("stability-status").textContent = "";
    document.body.dataset.stability = "ready";
  } catch (e) {
    if (mine !== seq) return;
    $("stability-status").textContent = (e.body && e.body.field ? e.body.field + ": " : "") + e.message;
  }
}
function schedule() {
  clearTimeout(timer);
  timer = setTimeout(update, 40);
}

async function sweep() {
  const name = $("sweep-param").value;
  const s = sliders.get(name);
  try {
    const ans = await api("POST", "/api/stability/sweep", { params: params(), param: name, from: s.min, to: s.max, points: 60, log: s.min > 0 && s.max / s.min >= 50 });
    const x = (v) => v / s.scale;
    const p = ans.points;
    charts.sweep.destroy();
    charts.sweep = xyChart($("chart-sweep"), { title: "Delay margins against " + s.label, xLabel: s.label + (s.unit ? " (" + s.unit + ")" : ""), yLabel: "µs", logX: s.min > 0 && s.max / s.min >= 50 });
    charts.sweep.set([
      { label: "τ* (Theorem 1)", points: p.map((q) => [x(q.value), q.tauStarUs]) },
      { label: "exact margin (QCN)", points: p.map((q) => [x(q.value), q.exactMarginUs]) },
      { label: "τ̂ (QCN-AIMD)", points: p.map((q) => [x(q.value), q.tauHatUs]) },
    ]);
    charts.sweep.el.dataset.param = name;
  } catch (e) {
    charts.sweep.el.dataset.error = e.message;
  }
}

// The packet overlay: both Fig. 9 scenarios at the sliders' N, RTT, G_d,
// w and p_s, 50 ms, run at full speed; their bottleneck queue is drawn
// beside the fluid queue.
function packetScenario(algo, p) {
  const doc = JSON.parse(JSON.stringify(data.packet[algo]));
  const n = Math.round(p.n);
  doc.name = `${doc.name}-stability-n${n}-rtt${Math.round(p.rtt * 1e6)}us`;
  doc.duration = "50ms";
  doc.topology.senders = n;
  doc.topology.hostLink.delay = Math.round((p.rtt / 2) * 1e9) + "ns";
  doc.workload[0].senders = Array.from({ length: n }, (_, i) => "h" + i);
  doc.cc.params = Object.assign({}, doc.cc.params, { gd: p.gd, w: p.w, sampling: p.ps });
  return doc;
}

async function runPacket() {
  const p = params();
  if (p.n > 32) {
    $("packet-status").textContent = "The packet overlay runs up to 32 sources; set N ≤ 32.";
    return;
  }
  const btn = $("run-packet");
  btn.disabled = true;
  const status = $("packet-status");
  try {
    const runs = {};
    for (const algo of ["qcn", "qcn_aimd"]) {
      const r = await api("POST", "/api/runs", { scenario: packetScenario(algo, p), speed: "max" });
      runs[algo] = r.id;
    }
    status.replaceChildren("Running: ", ...Object.entries(runs).flatMap(([a, id]) => [Object.assign(document.createElement("a"), { href: "/r/" + id, textContent: a }), " "]));
    const ended = ["done", "failed", "cancelled", "interrupted"];
    for (;;) {
      const st = await Promise.all(Object.values(runs).map((id) => api("GET", "/api/runs/" + id)));
      if (st.every((r) => ended.includes(r.status))) {
        if (st.some((r) => r.status !== "done")) throw new Error("a packet run ended " + st.map((r) => r.status).join(", "));
        break;
      }
      await new Promise((res) => setTimeout(res, 300));
    }
    const lines = [];
    let i = 0;
    for (const [algo, id] of Object.entries(runs)) {
      const cd = await api("GET", `/api/runs/${id}/series?metric=queue_bytes&entity=${encodeURIComponent("s0->s1")}`);
      const s = cd.series[0];
      if (s) lines.push({ label: (algo === "qcn" ? "QCN" : "QCN-AIMD") + " (packets)", color: color(i), points: s.t.map((t, j) => [t / 1e6, s.v[j] / 1500]) });
      if (fluidLast) lines.push({ label: (algo === "qcn" ? "QCN" : "QCN-AIMD") + " (fluid)", color: color(i), dash: [6, 4], points: pts(fluidLast[algo].t, fluidLast[algo].q, (t) => t * 1e3) });
      i++;
    }
    charts.overlay.set(lines);
    charts.overlay.el.dataset.runs = Object.values(runs).join(",");
    status.append(" done.");
  } catch (e) {
    status.textContent = "The packet run failed: " + e.message;
  } finally {
    btn.disabled = false;
  }
}

async function dcqcn() {
  const alpha = $("d-alpha").value;
  const body = {
    params: { n: Number($("d-n").value), delay: Number($("d-delay").value) * 1e-6, beta: Number($("d-beta").value), fixedAlpha: alpha === "" ? -1 : Number(alpha) },
    fluid: { duration: 0.1 },
  };
  try {
    const ans = await api("POST", "/api/stability/dcqcn", body);
    const t = ans.trajectory;
    const lines = [{ label: "queue", points: t.t.map((x, i) => [x * 1e3, t.q[i] / 1e3]) }];
    if (ans.fixedPoint) lines.push({ label: "fixed point", points: level(0, 100, ans.fixedPoint.q / 1e3), color: "#777", dash: [6, 4], width: 1 });
    charts.dcqcn.set(lines);
    $("dcqcn-fixed").textContent = ans.fixedPoint
      ? `Fixed point: R_C* = ${((ans.fixedPoint.rc * 8 * ans.params.packet) / 1e9).toPrecision(3)} Gbps per flow, p* = ${ans.pStar.toPrecision(3)}, α* = ${ans.fixedPoint.alpha.toPrecision(3)}, queue ${(ans.fixedPoint.q / 1e3).toPrecision(3)} KB.` + (ans.error ? " " + ans.error : "")
      : ans.fixedPointError + (ans.error ? " " + ans.error : "");
  } catch (e) {
    $("dcqcn-fixed").textContent = (e.body && e.body.field ? e.body.field + ": " : "") + e.message;
  }
}

for (const el of document.querySelectorAll("#stability-params input[data-param]")) {
  el.addEventListener("input", () => { show(el.dataset.param); schedule(); });
  el.addEventListener("change", sweep);
}
$("stability-reset").addEventListener("click", () => {
  for (const s of data.sliders) { $("p-" + s.name).value = s.value; show(s.name); }
  update();
  sweep();
});
$("sweep-param").addEventListener("change", sweep);
$("run-packet").addEventListener("click", runPacket);
$("d-run").addEventListener("click", dcqcn);
$("ap-run").addEventListener("click", apRun);
$("rcp-run").addEventListener("click", rcpRun);
update();
sweep();
dcqcn();
apRun();
rcpRun();
