// classview-lab.js: the lab's part of the class view (issue 21). The name a
// student gives their runs (kept in localStorage, sent with each run by
// lab.js), the link to the scenario's class view, and pinned exercises:
// the task above the editor and the locked fields read-only (the server
// refuses runs that change them anyway); an instructor pins one here.
import { api } from "./common.js";
import { isLocked } from "./exercise-lock.js";

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

const KEY = "cclab.runLabel";

// runLabel is the name the student typed ("" if none).
export function runLabel() {
  try { return (localStorage.getItem(KEY) || "").trim(); } catch (e) { return ""; }
}

const input = $("#run-label");
if (input) {
  input.value = runLabel();
  input.addEventListener("input", () => {
    try { localStorage.setItem(KEY, input.value.trim()); } catch (e) { /* private mode */ }
  });
}

let exercise = null; // the exercise governing the scenario, once known
let loadedFor = "";

// storedId is the stored scenario the lab shows ("" if not saved yet).
function storedId() {
  const el = $("#scenario-id");
  return (el && el.dataset.id) || "";
}

// currentId is the stored scenario the lab shows, or (a lab opened from a
// run, ?from=) the run's scenario it was edited from.
function currentId() {
  const el = $("#scenario-id");
  if (el && el.dataset.id) return el.dataset.id;
  const data = $("#lab-data");
  try { return (data && JSON.parse(data.textContent).parent) || ""; } catch (e) { return ""; }
}

// pathOf is the scenario path an editor input edits.
function pathOf(el) {
  if (el.dataset.path) return el.dataset.path;
  if (!el.dataset.rel) return "";
  const w = el.closest("#workload-list > li");
  if (!w) return "";
  const f = el.closest(".flows > li");
  const at = "workload[" + w.dataset.index + "]";
  return f ? at + ".flows[" + f.dataset.index + "]." + el.dataset.rel : at + "." + el.dataset.rel;
}

function applyLocks() {
  const locked = (exercise && exercise.locked) || [];
  const form = $("#editor");
  if (!form) return;
  for (const el of $$("[data-path], [data-rel]", form)) {
    const on = isLocked(locked, pathOf(el));
    if (!on && !el.hasAttribute("data-locked")) continue;
    el.toggleAttribute("data-locked", on);
    if (on) el.setAttribute("aria-readonly", "true");
    else el.removeAttribute("aria-readonly");
    if (el.tagName === "SELECT") {
      for (const o of el.options) o.disabled = on && o.value !== el.value;
    } else {
      el.readOnly = on;
    }
    el.title = on ? "Locked by the exercise" : "";
  }
  const wl = isLocked(locked, "workload");
  for (const b of $$("#fs-workload button", form)) {
    if (wl) b.dataset.locked = "";
    b.disabled = wl || (b.disabled && b.hasAttribute("data-locked"));
    if (!wl) delete b.dataset.locked;
  }
  const js = $("#json-text");
  if (js) {
    js.readOnly = locked.length > 0;
    js.title = locked.length > 0 ? "The exercise locks some fields: edit the form" : "";
  }
}

// a locked checkbox cannot be ticked (readOnly does not hold it)
document.addEventListener("click", (e) => {
  const t = e.target;
  if (t instanceof HTMLInputElement && t.type === "checkbox" && t.hasAttribute("data-locked")) e.preventDefault();
}, true);

function show() {
  const box = $("#exercise-task");
  if (box) {
    box.hidden = !exercise;
    if (exercise) {
      $("#exercise-text").textContent = exercise.task || "(no task text)";
      $("#exercise-locked").textContent = exercise.locked.length
        ? "Locked (read-only): " + exercise.locked.join(", ") + ". Change the other fields."
        : "";
    }
  }
  const t = $("#exercise-task-input");
  if (t && exercise && exercise.scenarioId === storedId()) {
    t.value = exercise.task;
    $("#exercise-locked-input").value = exercise.locked.join(", ");
  }
  applyLocks();
}

async function load(id) {
  try {
    exercise = await api("GET", "/api/scenarios/" + encodeURIComponent(id) + "/exercise");
  } catch (e) {
    if (e.status !== 404) console.warn("exercise", e);
    exercise = exercise && exercise.scenarioId !== id ? exercise : null; // a copy keeps its exercise's locks
  }
  show();
}

function onId() {
  const id = currentId();
  const link = $("#class-link");
  if (link) {
    link.hidden = !id;
    if (id) link.href = "/s/" + id + "/class";
  }
  const pin = $("#exercise-pin");
  if (pin) pin.hidden = !storedId();
  if (id && id !== loadedFor) {
    loadedFor = id;
    load(id);
  }
}

const idEl = $("#scenario-id");
if (idEl) new MutationObserver(onId).observe(idEl, { attributes: true, attributeFilter: ["data-id"] });
const form = $("#editor");
if (form) new MutationObserver(() => { if (exercise) applyLocks(); }).observe(form, { childList: true, subtree: true });
onId();

async function pin(on) {
  const out = $("#exercise-pin-status");
  const id = storedId();
  try {
    if (on) {
      const locked = $("#exercise-locked-input").value.split(",").map((s) => s.trim()).filter(Boolean);
      exercise = await api("PUT", "/api/scenarios/" + encodeURIComponent(id) + "/exercise",
        { locked, task: $("#exercise-task-input").value });
      out.textContent = "Pinned: share " + location.origin + "/s/" + id + " (class view: /s/" + id + "/class).";
    } else {
      await api("DELETE", "/api/scenarios/" + encodeURIComponent(id) + "/exercise");
      exercise = null;
      out.textContent = "Unpinned.";
    }
    show();
  } catch (e) {
    out.textContent = (e.body && e.body.field ? e.body.field + ": " : "") + e.message;
  }
}
const pinBtn = $("#exercise-pin-btn");
if (pinBtn) pinBtn.addEventListener("click", () => pin(true));
const unpinBtn = $("#exercise-unpin-btn");
if (unpinBtn) unpinBtn.addEventListener("click", () => pin(false));
