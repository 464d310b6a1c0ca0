// class.js: the instructor's class page: the per-owner limits form (PUT
// /api/class/limits, each problem shown next to its field) and the
// featured scenarios' Unfeature buttons (DELETE
// /api/scenarios/{id}/feature). The owners table is server-rendered.
import { api } from "./common.js";

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

const form = $("#limits-form");

function clearErrors() {
  for (const el of $$(".error", form)) el.textContent = "";
  for (const el of $$("[aria-invalid]", form)) el.removeAttribute("aria-invalid");
  for (const el of $$(".field.invalid", form)) el.classList.remove("invalid");
  $("#limits-errors").textContent = "";
}

// showErrors puts each problem next to the field it names, or above the
// button when it names none.
function showErrors(errors) {
  let first = null;
  for (const e of errors) {
    const box = e.field ? $("[data-error-for='" + CSS.escape(e.field) + "']", form) : null;
    const input = e.field ? $("[data-limit='" + CSS.escape(e.field) + "']", form) : null;
    if (box) {
      box.textContent = box.textContent ? box.textContent + "; " + e.error : e.error;
    } else {
      const p = document.createElement("p");
      p.textContent = (e.field ? e.field + ": " : "") + e.error;
      $("#limits-errors").appendChild(p);
    }
    if (input) {
      input.setAttribute("aria-invalid", "true");
      input.closest(".field").classList.add("invalid");
      if (!first) first = input;
    }
  }
  if (first) first.focus();
}

// the body: each field as a number when it reads as one; anything else is
// sent as typed, so the server's answer names the field
function collect() {
  const body = {};
  for (const el of $$("[data-limit]", form)) {
    const text = el.value.trim();
    const n = Number(text);
    body[el.dataset.limit] = text !== "" && Number.isFinite(n) ? n : text;
  }
  return body;
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  clearErrors();
  const status = $("#limits-status");
  status.textContent = "";
  const save = $("#limits-save");
  save.disabled = true;
  try {
    const lim = await api("PUT", "/api/class/limits", collect());
    for (const el of $$("[data-limit]", form)) {
      if (el.dataset.limit in lim) el.value = String(lim[el.dataset.limit]);
    }
    status.textContent = "Saved: the new limits apply now.";
    form.dataset.saved = String(Date.now());
  } catch (e) {
    showErrors(e.body && e.body.errors && e.body.errors.length ? e.body.errors : [{ field: "", error: e.message }]);
  } finally {
    save.disabled = false;
  }
});

$("#class-featured").addEventListener("click", async (ev) => {
  const b = ev.target.closest("[data-unfeature]");
  if (!b) return;
  b.disabled = true;
  const out = $("#featured-status");
  out.textContent = "";
  try {
    await api("DELETE", "/api/scenarios/" + encodeURIComponent(b.dataset.unfeature) + "/feature");
    b.closest("li").remove();
    $("#class-featured-none").hidden = $$("#class-featured > li").length > 0;
  } catch (e) {
    out.textContent = "Could not unfeature it: " + e.message;
    b.disabled = false;
  }
});
