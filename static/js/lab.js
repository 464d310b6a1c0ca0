// lab.js: the lab page. The editor is a form whose inputs name the field of
// the scenario they edit (data-path, e.g. "topology.hostLink.rate"); the
// scenario document is the editor's state, validated by the server on
// every change, with each problem shown next to the field it names.
import { api, copyText } from "./common.js";
import { fmt } from "./charts/index.js";
import { RunView } from "./runview.js";
import { getPath, pruneEmpty, readInput, setPath, writeInput } from "./lab-fields.js";
import { axisOfField, gridArg, parseSeeds, parseValues, runCount } from "./sweep-grid.js";
import { noteFork } from "./fork.js";
import { costText, expectedWall, needsConfirm, simSeconds, simulatedText, slowMotion } from "./guide.js";
import { runLabel } from "./classview-lab.js";

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// ---- the editor ----
const data = JSON.parse($("#lab-data").textContent);
let base = JSON.parse(data.scenario); // the document the form edits
let scenarioId = data.scenarioId;
let lastValid = null; // the last validation answer
let hosts = [];
let running = null; // the run id while one is live
let paused = false;
let foreign = false; // the followed run is someone else's: watch only
const view = new RunView();

const form = $("#editor");
const list = $("#workload-list");

function showKind(kind) {
  for (const el of $$(".kind", form)) {
    const on = el.dataset.kind === kind;
    el.hidden = !on;
    for (const input of $$("[data-path]", el)) input.disabled = !on;
  }
}

function fillForm(doc) {
  for (const el of $$("#fs-general [data-path], #fs-topology [data-path], #fs-switch [data-path]", form)) {
    writeInput(el, getPath(doc, el.dataset.path));
  }
  showKind((doc.topology && doc.topology.kind) || "dumbbell");
  list.textContent = "";
  (doc.workload || []).forEach((w) => addRow(w));
  writeInput($("#f-cc-algorithm"), (doc.cc && doc.cc.algorithm) || "dcqcn");
  $("#json-text").value = JSON.stringify(doc, null, 2);
  return loadParams(doc.cc || {});
}

async function loadParams(ccObj) {
  const algo = $("#f-cc-algorithm").value;
  const resp = await fetch("/ui/params?algo=" + encodeURIComponent(algo));
  $("#params").innerHTML = await resp.text();
  fillParams(ccObj);
}

function fillParams(ccObj) {
  // "default" is the shipped policy: the policy select's first option
  if (ccObj && ccObj.policy === "default") ccObj = Object.assign({}, ccObj, { policy: undefined });
  for (const el of $$("#params [data-path]")) writeInput(el, getPath({ cc: ccObj }, el.dataset.path));
  presetPlaceholders();
  setRunning(running !== null);
}

// presetPlaceholders shows, in each empty parameter, the value it will
// have: the chosen preset's, else the registry default.
function presetPlaceholders() {
  const sel = $("#f-cc-preset");
  const opt = sel && sel.selectedOptions[0];
  let values = {};
  try { values = opt && opt.dataset.values ? JSON.parse(opt.dataset.values) : {}; } catch (e) { values = {}; }
  for (const el of $$("#params [data-type='param']")) {
    if (!el.dataset.default) el.dataset.default = el.placeholder;
    const name = el.dataset.path.replace(/^cc\.params\./, "");
    el.placeholder = name in values ? String(values[name]) + " (preset)" : el.dataset.default;
  }
}

// ---- workload rows ----
// rowTemplate picks the form for a workload entry; kinds (and Poisson
// entries with a fixed size or source-destination pairs) the form has no
// inputs for are shown as they are and kept unchanged.
function rowTemplate(w) {
  const plain = w.kind !== "poisson" || (w.size === undefined && w.pairs === undefined);
  const known = ["flows", "incast", "poisson"].includes(w.kind) && plain;
  const tpl = $("#tpl-" + (known ? w.kind : "other"));
  const li = tpl.content.firstElementChild.cloneNode(true);
  if (!known) $(".wl-kind", li).textContent = w.kind;
  return li;
}

function addRow(w) {
  const li = rowTemplate(w);
  li.wl = JSON.parse(JSON.stringify(w)); // the entry as loaded: fields the row does not show are kept
  for (const el of $$(":scope > label [data-rel], :scope > [data-rel]", li)) {
    writeInput(el, w[el.dataset.rel]);
  }
  if (w.kind === "flows") {
    const flows = $(".flows", li);
    for (const f of w.flows || []) flows.appendChild(flowRow(f));
  }
  list.appendChild(li);
  numberRows();
}

function flowRow(f) {
  const li = $("#tpl-flow").content.firstElementChild.cloneNode(true);
  li.fl = JSON.parse(JSON.stringify(f)); // fields the row does not show (a flow's own cc) are kept
  for (const el of $$("[data-rel]", li)) writeInput(el, f[el.dataset.rel]);
  return li;
}

// numberRows gives each row and flow the paths its errors come back on.
function numberRows() {
  $$(":scope > li", list).forEach((li, i) => {
    li.dataset.index = String(i);
    li.setAttribute("aria-label", "Workload " + (i + 1) + ": " + li.dataset.kind);
    $$(".flows > li", li).forEach((f, j) => { f.dataset.index = String(j); });
  });
}

function collectWorkload() {
  return $$(":scope > li", list).map((li) => {
    const w = JSON.parse(JSON.stringify(li.wl || {}));
    w.kind = li.wl ? li.wl.kind : li.dataset.kind;
    if (li.dataset.kind === "other") return w;
    for (const el of $$(":scope > label [data-rel], :scope > [data-rel]", li)) {
      const v = readInput(el);
      if (v === undefined) delete w[el.dataset.rel];
      else w[el.dataset.rel] = v;
    }
    if (li.dataset.kind === "flows") {
      w.flows = $$(".flows > li", li).map((f) => {
        const o = JSON.parse(JSON.stringify(f.fl || {}));
        for (const el of $$("[data-rel]", f)) {
          const v = readInput(el);
          if (v === undefined) delete o[el.dataset.rel];
          else o[el.dataset.rel] = v;
        }
        return o;
      });
    }
    return w;
  });
}

function defaultEntry(kind) {
  const h0 = hosts[0] || "h0";
  const h1 = hosts[hosts.length - 1] || "h1";
  switch (kind) {
    case "flows": return { kind, flows: [{ src: h0, dst: h1, size: "1MB", start: "0s" }] };
    case "incast": return { kind, senders: hosts.slice(0, Math.max(1, hosts.length - 1)), receiver: h1, size: "300KB", start: "0s" };
    default: return { kind: "poisson", cdf: "websearch", load: 0.3, from: "0s", until: "1ms" };
  }
}

// ---- the document ----
function collect() {
  const doc = JSON.parse(JSON.stringify(base));
  for (const el of $$("#fs-general [data-path], #fs-switch [data-path]", form)) {
    setPath(doc, el.dataset.path, readInput(el));
  }
  const kind = $("#f-topology-kind").value;
  if (kind === "custom" && base.topology && base.topology.kind === "custom") {
    doc.topology = JSON.parse(JSON.stringify(base.topology));
  } else {
    doc.topology = { kind };
    for (const el of $$(".kind[data-kind='" + kind + "'] [data-path]", form)) {
      setPath(doc, el.dataset.path, readInput(el));
    }
  }
  const ecn = doc.switch && doc.switch.ecn;
  if (ecn && ecn.kmin === undefined && ecn.kmax === undefined && ecn.pmax === undefined && ecn.enabled !== false) {
    delete doc.switch.ecn; // left out: each algorithm's own thresholds
  }
  doc.workload = collectWorkload();
  const algo = $("#f-cc-algorithm").value;
  const ccObj = { algorithm: algo };
  if (base.cc && base.cc.algorithm === algo) {
    // keep what the form does not show (per-flow cc stays in workload)
  }
  for (const el of $$("#params [data-path]")) setPath({ cc: ccObj }, el.dataset.path, readInput(el));
  doc.cc = ccObj;
  pruneEmpty(doc);
  if (!doc.workload) doc.workload = [];
  return doc;
}

// ---- validation and errors ----
function clearErrors() {
  for (const el of $$(".error")) el.textContent = "";
  for (const el of $$("[aria-invalid]")) el.removeAttribute("aria-invalid");
  for (const el of $$(".field.invalid")) el.classList.remove("invalid");
  $("#form-errors").textContent = "";
}

// errorTarget finds where a problem on field is shown: the field's own
// error element, or the nearest enclosing one.
function errorTarget(field) {
  let path = field;
  while (path) {
    const wl = path.match(/^workload\[(\d+)\](?:\.(.*))?$/);
    if (wl) {
      const row = $$(":scope > li", list)[Number(wl[1])];
      if (row) {
        let rest = wl[2] || "";
        const fl = rest.match(/^flows\[(\d+)\]/);
        if (fl) {
          const f = $$(".flows > li", row)[Number(fl[1])];
          if (f) return { box: $("[data-error-rel='']", f), input: fieldInput(f, rest.replace(/^flows\[\d+\]\.?/, "")) };
          rest = "";
        }
        const box = $("[data-error-rel='" + rest.split(/[.[]/)[0] + "']", row) || $(":scope > [data-error-rel='']", row);
        return { box, input: fieldInput(row, rest.split(/[.[]/)[0]) };
      }
    }
    const box = visible("[data-error-for='" + CSS.escape(path) + "']");
    if (box) {
      return { box, input: visible("[data-path='" + CSS.escape(field) + "']") || visible("[data-path='" + CSS.escape(path) + "']") };
    }
    const cut = Math.max(path.lastIndexOf("."), path.lastIndexOf("["));
    path = cut > 0 ? path.slice(0, cut) : "";
  }
  return { box: null, input: null };
}

// visible finds the first match outside the hidden topology kinds.
function visible(sel) {
  return $$(sel).find((el) => !el.closest("[hidden]")) || null;
}

function fieldInput(root, rel) {
  return rel ? $("[data-rel='" + CSS.escape(rel) + "']", root) : null;
}

function showErrors(errors) {
  clearErrors();
  let first = null;
  for (const e of errors || []) {
    const { box, input } = errorTarget(e.field || "");
    const text = (e.field ? e.field + ": " : "") + e.error;
    if (box) {
      box.textContent = box.textContent ? box.textContent + "; " + e.error : e.error;
      box.dataset.field = e.field;
    } else {
      const p = document.createElement("p");
      p.textContent = text;
      $("#form-errors").appendChild(p);
    }
    if (input) {
      input.setAttribute("aria-invalid", "true");
      const f = input.closest(".field");
      if (f) f.classList.add("invalid");
      if (!first) first = input;
    }
  }
  return first;
}

let validateTimer = null;
let validateSeq = 0;
function scheduleValidate() {
  clearTimeout(validateTimer);
  validateTimer = setTimeout(validate, 250);
}

async function validate() {
  const seq = ++validateSeq;
  const doc = collect();
  $("#json-text").value = JSON.stringify(doc, null, 2);
  try {
    const v = await api("POST", "/api/scenarios/validate", doc);
    if (seq !== validateSeq) return null;
    clearErrors();
    lastValid = v;
    hosts = v.hosts || [];
    view.setFlows(v.flows);
    if (!v.runnable && v.limit) showErrors(v.limit.errors);
    showCost();
    drawTopology(v);
    if (!$("#sweep-panel").hidden) fillSweepChoices(); // workloads and values may have changed
    document.body.dataset.valid = "true";
    return v;
  } catch (e) {
    if (seq !== validateSeq) return null;
    lastValid = null;
    document.body.dataset.valid = "false";
    showErrors(e.body && e.body.errors ? e.body.errors : [{ field: "", error: e.message }]);
    return null;
  }
}

// topoKey names the drawn topology, so it is redrawn only when it changes
// (the server drew the first one)
const keyOf = (hosts, ports) => hosts.slice().sort().join(",") + "|" + ports.slice().sort().join(",");
let topoKey = keyOf($$("#topology-view .node.host").map((n) => n.dataset.node),
  $$("#topology-view [data-port]").map((p) => p.dataset.port));
async function drawTopology(v) {
  const key = keyOf(v.hosts || [], v.ports || []);
  if (key === topoKey) return;
  topoKey = key;
  view.clearSelection(); // another topology: the clicked ports and host may not exist there
  const resp = await fetch("/ui/topology", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ hosts: v.hosts, ports: v.ports }),
  });
  if (resp.ok) {
    $("#topology-view").innerHTML = await resp.text();
    view.markTopology();
  }
}

// ---- save and share ----
async function save() {
  const v = await validate();
  if (!v) return null;
  const doc = collect();
  const parent = scenarioId || data.parent; // the scenario this one was edited from (the class view)
  const r = await api("POST", "/api/scenarios" + (parent ? "?parent=" + encodeURIComponent(parent) : ""), doc);
  if (r.id !== scenarioId) {
    noteFork(api, scenarioId, r.id); // not a silent fork: say what it is
    scenarioId = r.id;
    history.replaceState(null, "", "/s/" + r.id);
  }
  const idEl = $("#scenario-id");
  idEl.textContent = "id " + r.id;
  idEl.dataset.id = r.id;
  $("#copy-link").dataset.link = location.origin + "/s/" + r.id;
  $("#lab-title").textContent = doc.name || "Scenario";
  base = doc;
  showFeature();
  return r.id;
}

// ---- an instructor features the stored scenario for the class ----
const featured = new Set(data.featured || []);
function showFeature() {
  const b = $("#feature-btn");
  if (!b) return;
  b.hidden = !scenarioId;
  b.setAttribute("aria-pressed", featured.has(scenarioId) ? "true" : "false");
}

async function toggleFeature() {
  const b = $("#feature-btn");
  const out = $("#feature-status");
  const on = b.getAttribute("aria-pressed") !== "true";
  b.disabled = true;
  try {
    const r = await api(on ? "POST" : "DELETE", "/api/scenarios/" + encodeURIComponent(scenarioId) + "/feature");
    featured.clear();
    for (const id of r.featured || []) featured.add(id);
    showFeature();
    out.textContent = featured.has(scenarioId) ? "Featured: listed first on everyone's home page." : "No longer featured.";
  } catch (e) {
    out.textContent = e.message;
  } finally {
    b.disabled = false;
  }
}

// ---- running ----
function setRunning(on) {
  for (const fs of $$("fieldset", form)) {
    if (fs.id === "fs-cc") continue;
    fs.disabled = on;
  }
  $("#f-cc-algorithm").disabled = on;
  for (const f of $$("#params .field")) {
    const input = $("[data-path]", f);
    if (input) input.disabled = on && (f.dataset.live !== "true" || foreign);
  }
  $("#json-apply").disabled = on;
  $("#run-btn").disabled = on;
  $("#pause-btn").disabled = !on || foreign;
  $("#stop-btn").disabled = !on || foreign;
  $("#speed").disabled = on && foreign;
  if (!on) { paused = false; $("#pause-btn").textContent = "Pause"; }
}

function setForeign(on) {
  foreign = on;
  $("#foreign-note").hidden = !on;
  setRunning(running !== null);
}

function speedValue() {
  const v = $("#speed").value;
  return v === "max" ? "max" : Number(v);
}

function setStatus(status) {
  const el = $("#status");
  if (el.textContent === status) return; // a live region: announce changes only
  el.textContent = status;
  el.className = "badge " + status;
}

function onProgress(p) {
  $("#progress").value = p.progress || 0;
  setStatus(p.status);
  // the run's own state drives the controls (another tab may have
  // paused it, or changed its speed)
  paused = p.status === "paused";
  $("#pause-btn").textContent = paused ? "Resume" : "Pause";
  $("#pause-btn").disabled = p.status === "queued" || foreign;
  const sp = $("#speed");
  const want = p.speed === "max" || p.speed === undefined ? "max" : String(p.speed);
  if (document.activeElement !== sp && sp.value !== want) writeInput(sp, want);
  const total = lastValid && lastValid.cost ? simSeconds(lastValid.cost) * 1e9 : 0;
  $("#progress-text").textContent = simulatedText(p.simNs, total) + ", " +
    p.flowsFinished + "/" + p.flowsTotal + " flows done, " + (p.eventsPerSecond / 1e6).toFixed(2) + " M events/s";
}

function follow(runId) {
  running = runId;
  setRunning(true);
  const url = new URL(location.href);
  url.searchParams.set("run", runId);
  history.replaceState(null, "", url);
  const link = $("#run-link");
  link.href = "/r/" + runId;
  link.textContent = "run " + runId;
  link.hidden = false;
  view.attach(runId, {
    // only its owner (or an instructor) may change a run: anyone else
    // watches it without controls that would only be refused
    hello: (m) => setForeign(!(m.run && m.run.mine)),
    progress: onProgress,
    done: (m) => {
      setStatus(m.status);
      if (m.type === "done" && m.status === "done") $("#progress").value = 1;
      if (m.error) $("#form-errors").textContent = m.error;
      if (m.summary) view.showSummaryStats(m.summary);
      ended();
    },
    closed: async () => {
      // the stream ended without a final message: ask the API
      try {
        const r = await api("GET", "/api/runs/" + runId);
        if (["queued", "running", "paused"].includes(r.status)) {
          $("#form-errors").textContent = "Lost the live stream; reconnecting…";
          setTimeout(() => { if (running === runId) { $("#form-errors").textContent = ""; follow(runId); } }, 2000);
          return;
        }
        setStatus(r.status);
        if (r.summary) view.showSummaryStats(r.summary);
      } catch (e) {
        $("#form-errors").textContent = e.status === 404 ? "There is no run " + runId + "." : "Lost the connection to the server: " + e.message;
      }
      ended();
    },
  });
}

// ended returns the lab to editing; live changes belonged to the run, so
// the parameter form shows the scenario's own values again.
function ended() {
  running = null;
  setForeign(false);
  setRunning(false);
  fillParams((base && base.cc) || {});
  const url = new URL(location.href);
  url.searchParams.delete("run");
  history.replaceState(null, "", url);
}

async function run() {
  $("#run-btn").disabled = true;
  try {
    const id = await save();
    if (!id) {
      const first = $("[aria-invalid='true']");
      if (first) first.focus();
      $("#run-btn").disabled = false;
      return;
    }
    if (!confirmCost()) {
      $("#run-btn").disabled = false;
      return;
    }
    const r = await api("POST", "/api/runs", { scenarioId: id, speed: speedValue(), label: runLabel() });
    view.reset();
    foreign = false;
    setStatus("queued");
    $("#progress").value = 0;
    follow(r.id);
  } catch (e) {
    showErrors(e.body && e.body.errors ? e.body.errors : [{ field: "", error: e.message }]);
    $("#run-btn").disabled = false;
  }
}

// ---- guidance: what a run will cost, before it starts ----
function showCost() {
  const el = $("#cost-text");
  if (!el || running) return;
  el.textContent = lastValid && lastValid.cost ? costText(lastValid.cost, speedValue()) : "";
}

// confirmCost asks before a run expected to take long (over 30 s).
function confirmCost() {
  if (!lastValid || !lastValid.cost || !needsConfirm(lastValid.cost, speedValue())) return true;
  return confirm("This run is expected to take " + Math.round(expectedWall(lastValid.cost, speedValue())) +
    " s (" + costText(lastValid.cost, speedValue()) + "). Run it?");
}

// openSlowly: a tiny run opens in slow motion, so there is something to
// watch (the speed can be changed before or during the run).
function openSlowly() {
  const sp = $("#speed");
  if (!lastValid || !lastValid.cost || sp.value !== "max") return;
  const v = slowMotion(lastValid.cost);
  if (v !== "max") {
    writeInput(sp, String(v));
    showCost();
  }
}

async function control(what) {
  if (!running) return;
  try {
    await api("POST", "/api/runs/" + running + "/" + what);
    if (what === "pause" || what === "resume") {
      paused = what === "pause";
      $("#pause-btn").textContent = paused ? "Resume" : "Pause";
    }
  } catch (e) {
    $("#form-errors").textContent = e.message;
  }
}

// a live parameter edit during a run goes to the run, not the document
async function liveParam(el) {
  const name = el.dataset.path.replace(/^cc\.params\./, "");
  const v = readInput(el);
  if (v === undefined) return;
  const box = $("[data-error-for='" + CSS.escape(el.dataset.path) + "']");
  try {
    await api("POST", "/api/runs/" + running + "/params", { [name]: v });
    if (box) box.textContent = "";
    el.removeAttribute("aria-invalid");
  } catch (e) {
    if (box) box.textContent = e.message;
    el.setAttribute("aria-invalid", "true");
  }
}

// ---- sweeps: the scenario over a grid of parameter values ----
const OTHER = "__other__";

// sweepChoices are the paths the panel offers, grouped: the algorithm's
// parameters (from its form), the load of each Poisson workload, the
// switches' buffer and ECN thresholds. Each has the value it has now.
function sweepChoices() {
  const doc = collect();
  const groups = [];
  const params = $$("#params [data-type='param']").map((el) => {
    const name = el.dataset.path.replace(/^cc\.params\./, "");
    const unit = $(".unit", el.closest(".field"));
    const now = el.value.trim() || String(el.dataset.default || el.placeholder || "").replace(/ \(preset\)$/, "");
    return { path: el.dataset.path, label: name + (unit ? " " + unit.textContent : ""), now };
  });
  if (params.length) groups.push({ label: "Algorithm (" + $("#f-cc-algorithm").value + ")", items: params });
  const loads = [];
  $$(":scope > li", list).forEach((li, i) => {
    if (li.dataset.kind !== "poisson") return;
    const path = "workload[" + i + "].load";
    const v = getPath(doc, path);
    loads.push({ path, label: path + " (Poisson load)", now: v === undefined ? "" : String(v) });
  });
  if (loads.length) groups.push({ label: "Workload", items: loads });
  const sw = [["switch.buffer", "shared buffer"], ["switch.ecn.kmin", "ECN Kmin"], ["switch.ecn.kmax", "ECN Kmax"], ["switch.ecn.pmax", "ECN Pmax"]]
    .map(([path, label]) => {
      const v = getPath(doc, path);
      const el = $("[data-path='" + path + "']");
      return { path, label: path + " (" + label + ")", now: v === undefined ? (el && el.placeholder) || "" : String(v) };
    });
  groups.push({ label: "Switches", items: sw });
  return groups;
}

function sweepAxes() {
  return $$("#sweep-panel .sweep-axis");
}

// fillSweepChoices (re)builds the parameter lists, keeping each choice
// that is still on offer.
function fillSweepChoices() {
  const groups = sweepChoices();
  const now = new Map();
  for (const g of groups) for (const it of g.items) now.set(it.path, it.now);
  sweepAxes().forEach((fs, i) => {
    const sel = $("[data-role='param']", fs);
    const keep = sel.value;
    const opts = [];
    if (sel.dataset.none) opts.push(new Option("(none)", ""));
    for (const g of groups) {
      const og = document.createElement("optgroup");
      og.label = g.label;
      for (const it of g.items) og.appendChild(new Option(it.label, it.path));
      opts.push(og);
    }
    opts.push(new Option("another path…", OTHER));
    sel.replaceChildren(...opts);
    const paths = new Set([...now.keys(), "", OTHER]);
    if (keep && paths.has(keep)) sel.value = keep;
    else if (i === 0) sel.value = groups[0].items[0].path;
    else sel.value = "";
    sel.dataset.now = JSON.stringify(Object.fromEntries(now));
  });
  updateSweep();
}

// sweepAxis reads one axis of the panel: its path ("" when unused), its
// values box and what that parses to.
function sweepAxis(fs) {
  const sel = $("[data-role='param']", fs);
  const other = sel.value === OTHER;
  const path = other ? $("[data-role='path']", fs).value.trim() : sel.value;
  const text = $("[data-role='values']", fs).value;
  return { path, text, other, used: other || path !== "", parsed: parseValues(text) };
}

// suggest proposes values around a number: half, it, twice.
function suggest(now) {
  const v = Number(now);
  if (!(now !== "" && Number.isFinite(v) && v > 0)) return "1,10,100 or 0.1:0.5:0.1";
  const g = (x) => String(Number(x.toPrecision(3)));
  return g(v / 2) + "," + g(v) + "," + g(v * 2);
}

// updateSweep shows each axis' values as read, and what the grid makes.
function updateSweep() {
  const counts = [];
  sweepAxes().forEach((fs) => {
    const sel = $("[data-role='param']", fs);
    const a = sweepAxis(fs);
    $("[data-role='path-field']", fs).hidden = !a.other;
    $("[data-role='values-field']", fs).hidden = !a.used;
    const values = $("[data-role='values']", fs);
    let now = "";
    try { now = a.other ? "" : (JSON.parse(sel.dataset.now || "{}")[a.path] || ""); } catch (e) { now = ""; }
    values.placeholder = suggest(now);
    const help = $("[data-role='values-help']", fs);
    const base = now !== "" ? "Now: " + now + ". " : "";
    if (!a.used) return;
    if (a.text.trim() === "") {
      help.textContent = base + "A list (1,10,100) or a range lo:hi:step (0.1:0.5:0.1).";
      counts.push(null);
    } else if (a.parsed.error) {
      help.textContent = base + "Not yet: " + a.parsed.error + ".";
      counts.push(null);
    } else {
      const vs = a.parsed.values;
      help.textContent = base + vs.length + (vs.length === 1 ? " value: " : " values: ") + (vs.length > 8 ? vs.slice(0, 8).join(", ") + ", …" : vs.join(", "));
      counts.push(vs.length);
    }
  });
  const seeds = parseSeeds($("#sw-seeds").value);
  const c = runCount(counts, seeds.seeds ? seeds.seeds.length : null);
  const out = $("#sweep-count");
  out.textContent = c.text + (seeds.error && $("#sw-seeds").value.trim() ? " (seeds: " + seeds.error + ")" : "");
  out.dataset.runs = c.runs === null ? "" : String(c.runs);
}

function clearSweepErrors() {
  for (const el of $$("#sweep-panel .sweep-error")) el.textContent = "";
  for (const el of $$("#sweep-panel [aria-invalid]")) el.removeAttribute("aria-invalid");
  $("#sweep-errors").textContent = "";
}

// showSweepErrors puts each problem of a refused sweep next to the axis or
// the seeds it names; the rest under the panel.
function showSweepErrors(errors, used) {
  clearSweepErrors();
  const paths = used.map((a) => a.path);
  let first = null;
  for (const e of errors) {
    const field = e.field || "";
    const i = axisOfField(field, paths);
    let box = null;
    let input = null;
    if (i >= 0 && i < used.length) {
      const fs = used[i].fs;
      box = $("[data-sweep-axis]", fs);
      const onPath = /\.path$/.test(field);
      input = onPath ? (used[i].other ? $("[data-role='path']", fs) : $("[data-role='param']", fs)) : $("[data-role='values']", fs);
    } else if (field === "seeds" || field.startsWith("seeds[")) {
      box = $("#sw-seeds-err");
      input = $("#sw-seeds");
    }
    if (box) {
      box.textContent = box.textContent ? box.textContent + "; " + e.error : e.error;
      box.dataset.field = field;
      input.setAttribute("aria-invalid", "true");
      if (!first) first = input;
    } else {
      const p = document.createElement("p");
      p.textContent = (field ? field + ": " : "") + e.error;
      $("#sweep-errors").appendChild(p);
    }
  }
  if (first) first.focus();
}

async function startSweep() {
  const btn = $("#sweep-start");
  if (btn.disabled) return; // one at a time
  btn.disabled = true;
  clearSweepErrors();
  try {
    const v = await validate();
    if (!v) {
      $("#sweep-errors").textContent = "The scenario has problems (shown in the editor): fix them first.";
      return;
    }
    const used = sweepAxes().map((fs) => Object.assign(sweepAxis(fs), { fs })).filter((a) => a.used);
    const unnamed = used.findIndex((a) => a.other && a.path === "");
    if (unnamed >= 0) {
      showSweepErrors([{ field: "axes[" + unnamed + "].path", error: "type the path of the field to sweep, e.g. topology.hostLink.rate" }], used);
      return;
    }
    const doc = collect();
    // no name: the server's ("NAME sweep") also names each run, with its
    // point's values
    const body = {
      scenario: doc,
      grid: used.map((a) => gridArg(a.path, a.text)),
      seeds: $("#sw-seeds").value.trim(),
    };
    try {
      const r = await api("POST", "/api/sweeps", body);
      location.href = (r.links && r.links.page) || "/sweeps/" + encodeURIComponent(r.id);
    } catch (e) {
      const errs = e.body && Array.isArray(e.body.errors) && e.body.errors.length ? e.body.errors : [{ field: (e.body && e.body.field) || "", error: e.message }];
      showSweepErrors(errs, used);
    }
  } finally {
    btn.disabled = false;
  }
}

function toggleSweep(open) {
  const panel = $("#sweep-panel");
  const on = open === undefined ? panel.hidden : open;
  panel.hidden = !on;
  $("#sweep-btn").setAttribute("aria-expanded", on ? "true" : "false");
  if (on) {
    fillSweepChoices();
    $("[data-role='param']", panel).focus();
  } else {
    $("#sweep-btn").focus();
  }
}

$("#sweep-btn").addEventListener("click", () => toggleSweep());
$("#sweep-close").addEventListener("click", () => toggleSweep(false));
$("#sweep-start").addEventListener("click", startSweep);
$("#sweep-panel").addEventListener("input", updateSweep);
$("#sweep-panel").addEventListener("change", (ev) => {
  if (ev.target.dataset.role === "param" && ev.target.value === OTHER) {
    const p = $("[data-role='path']", ev.target.closest(".sweep-axis"));
    updateSweep();
    p.focus();
    return;
  }
  updateSweep();
});
$("#sweep-panel").addEventListener("keydown", (ev) => {
  if (ev.key === "Escape") toggleSweep(false);
  if (ev.key === "Enter" && ev.target.tagName === "INPUT") startSweep();
});

// ---- events ----
form.addEventListener("input", (ev) => {
  if (ev.target.id === "json-text") return;
  if (running && ev.target.closest("#params")) return;
  scheduleValidate();
});
form.addEventListener("change", (ev) => {
  const t = ev.target;
  if (t.id === "json-text") return;
  if (running && t.closest("#params .field[data-live='true']")) { liveParam(t); return; }
  if (t.id === "f-topology-kind") showKind(t.value);
  if (t.id === "f-cc-preset") {
    // a preset replaces the parameters: clear the overrides
    for (const el of $$("#params [data-type='param']")) el.value = "";
    presetPlaceholders();
  }
  scheduleValidate();
});
form.addEventListener("click", (ev) => {
  const t = ev.target;
  if (t.matches("[data-add]")) {
    addRow(defaultEntry(t.dataset.add));
    const first = $(":scope > li:last-child [data-rel]", list);
    if (first) first.focus(); // keyboard users land in the new entry
    scheduleValidate();
  }
  if (t.matches("[data-remove]")) {
    const row = t.closest("li.wl");
    const next = row.nextElementSibling || row.previousElementSibling;
    row.remove();
    numberRows();
    // focus stays in the list, or goes to the add buttons
    const target = next ? $("[data-remove]", next) : $("[data-add]", form);
    if (target) target.focus();
    scheduleValidate();
  }
  if (t.matches("[data-add-flow]")) {
    const h0 = hosts[0] || "h0";
    $(".flows", t.closest("li.wl")).appendChild(flowRow({ src: h0, dst: hosts[hosts.length - 1] || "h1", size: "1MB", start: "0s" }));
    numberRows();
    scheduleValidate();
  }
  if (t.matches("[data-remove-flow]")) {
    const wl = t.closest("li.wl");
    t.closest("li.flow").remove();
    numberRows();
    const target = $("[data-remove-flow]", wl) || $("[data-add-flow]", wl);
    if (target) target.focus();
    scheduleValidate();
  }
});
document.body.addEventListener("htmx:afterSwap", (ev) => {
  if (ev.target.id === "params") {
    fillParams({});
    scheduleValidate();
    if (!$("#sweep-panel").hidden) fillSweepChoices();
  }
});
$("#json-apply").addEventListener("click", () => {
  try {
    base = JSON.parse($("#json-text").value);
  } catch (e) {
    showErrors([{ field: "", error: "the JSON does not parse: " + e.message }]);
    return;
  }
  fillForm(base).then(validate);
});
$("#run-btn").addEventListener("click", run);
if ($("#feature-btn")) $("#feature-btn").addEventListener("click", toggleFeature);
$("#pause-btn").addEventListener("click", () => control(paused ? "resume" : "pause"));
$("#stop-btn").addEventListener("click", () => control("cancel"));
$("#speed").addEventListener("change", () => {
  showCost();
  if (running) api("POST", "/api/runs/" + running + "/speed", { speed: speedValue() }).catch((e) => {
    $("#form-errors").textContent = e.message;
  });
});
$("#copy-link").addEventListener("click", async (ev) => {
  // share what is on screen: save it first (a changed scenario forks)
  ev.stopImmediatePropagation();
  const id = await save();
  if (id) copyText(location.origin + "/s/" + id, $("#copy-status"));
}, true);

// Run waits until the form (with its parameter form) is loaded and checked
$("#run-btn").disabled = true;
if (scenarioId) $("#copy-link").dataset.link = location.origin + "/s/" + scenarioId;
fillForm(base).then(validate).then(() => {
  if (data.runId) follow(data.runId);
  else {
    openSlowly();
    $("#run-btn").disabled = false;
  }
});
