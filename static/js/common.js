// common.js: what every page shares: the large-text toggle, copy-link
// buttons, "run with every algorithm", and small API helpers. An ES module,
// no build step; it talks to the server's public REST API only.
import { compareOrder, runAllPlan } from "./runall.js";

// page errors are kept where the real-browser tests (and a curious
// student with the inspector) can read them: the page's data-errors
// attribute, one per line
function keepError(msg) {
  const d = document.documentElement.dataset;
  d.errors = (d.errors ? d.errors + "\n" : "") + msg;
}
window.addEventListener("error", (ev) => keepError(String(ev.message || ev.error)));
window.addEventListener("unhandledrejection", (ev) => keepError("unhandled: " + String((ev.reason && ev.reason.message) || ev.reason)));

// api calls the REST API and returns the decoded JSON; a 4xx/5xx throws
// an Error carrying the contract's error body as .body and .status.
export async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  init.headers["X-Cclab-Client"] = clientId();
  const resp = await fetch(path, init);
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  if (!resp.ok) {
    const err = new Error((data && data.error) || resp.statusText || ("HTTP " + resp.status));
    err.status = resp.status;
    err.body = data;
    throw err;
  }
  return data;
}

// clientId identifies this browser to the server's per-client limits, so
// a class behind one address is not one client.
export function clientId() {
  let id = null;
  try { id = localStorage.getItem("cclab-client"); } catch (e) { /* private mode */ }
  if (!id) {
    id = Math.random().toString(36).slice(2) + Date.now().toString(36);
    try { localStorage.setItem("cclab-client", id); } catch (e) { /* ignore */ }
  }
  return id;
}

export async function copyText(text, statusEl) {
  let ok = false;
  try {
    await navigator.clipboard.writeText(text);
    ok = true;
  } catch (e) {
    // clipboard API unavailable (http, permissions): fall back to a
    // selected text field
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
    ta.remove();
  }
  if (statusEl) {
    statusEl.textContent = ok ? "Link copied: " + text : "Copy this link: " + text;
    statusEl.dataset.link = text;
  }
  return ok;
}

// runAll starts a scenario under every registered algorithm and opens the
// comparison of those runs. Given the run it was asked from (fromRun),
// that run, as it ran (its parameters and preset), is the first compared
// run and its algorithm is not started again; every other algorithm runs
// with its defaults. A run refused by a per-client or queue limit
// (429) is retried as slots free up; one the scenario cannot run with
// (e.g. an algorithm that needs INT on a fabric without it) is reported
// on the compare page.
export async function runAll(scenarioId, button, fromRun) {
  if (button) { button.disabled = true; button.textContent = "Starting runs…"; }
  const algos = await api("GET", "/api/algorithms");
  const original = fromRun ? await api("GET", "/api/runs/" + fromRun) : null;
  const ids = [];
  const refused = [];
  for (const name of runAllPlan(algos, original && original.algorithm)) {
    const a = { name };
    const deadline = Date.now() + 120000;
    for (;;) {
      try {
        const r = await api("POST", "/api/runs", { scenarioId, cc: { algorithm: a.name } });
        ids.push(r.id);
        break;
      } catch (e) {
        if (e.status === 429 && Date.now() < deadline) {
          if (button) button.textContent = "Waiting for a free slot for " + a.name + "…";
          await new Promise((res) => setTimeout(res, 1000));
          continue;
        }
        refused.push(a.name + ": " + e.message);
        break;
      }
    }
  }
  try { sessionStorage.setItem("cclab-refused", JSON.stringify(refused)); } catch (e) { /* ignore */ }
  if (ids.length) {
    location.href = "/compare?runs=" + compareOrder(fromRun, ids).join(",") + "&defaults=1";
  } else if (button) {
    button.disabled = false;
    button.textContent = "No algorithm could run it: " + refused.join("; ");
  }
}

function init() {
  const large = document.getElementById("large-text");
  const apply = (on) => {
    document.body.classList.toggle("large", on);
    if (large) large.setAttribute("aria-pressed", on ? "true" : "false");
  };
  let on = false;
  try { on = localStorage.getItem("cclab-large") === "1"; } catch (e) { /* ignore */ }
  apply(on);
  if (large) {
    large.addEventListener("click", () => {
      on = !document.body.classList.contains("large");
      apply(on);
      try { localStorage.setItem("cclab-large", on ? "1" : "0"); } catch (e) { /* ignore */ }
    });
  }
  const copy = document.getElementById("copy-link");
  if (copy) {
    copy.addEventListener("click", () => {
      const link = copy.dataset.link || location.href;
      copyText(link, document.getElementById("copy-status"));
    });
  }
  const all = document.getElementById("run-all");
  if (all) {
    all.addEventListener("click", () => runAll(all.dataset.scenario, all, all.dataset.run).catch((e) => {
      all.disabled = false;
      all.textContent = "Failed: " + e.message;
    }));
  }
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", init);
} else {
  init();
}
