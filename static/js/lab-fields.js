// lab-fields.js: the lab editor's data plumbing, without the page: paths
// into the scenario document ("workload[0].flows[1].size") and values
// between form inputs and JSON. Path helpers are pure (unit-tested with
// node --test in static/jstest).

// ---- paths: "workload[0].flows[1].size" ----
export function parsePath(path) {
  const steps = [];
  for (const part of path.split(".")) {
    const m = part.match(/^([^[\]]*)((?:\[\d+\])*)$/);
    if (!m) { steps.push(part); continue; }
    if (m[1]) steps.push(m[1]);
    for (const idx of m[2].match(/\d+/g) || []) steps.push(Number(idx));
  }
  return steps;
}

export function getPath(obj, path) {
  let cur = obj;
  for (const s of parsePath(path)) {
    if (cur === null || cur === undefined) return undefined;
    cur = cur[s];
  }
  return cur;
}

export function setPath(obj, path, value) {
  const steps = parsePath(path);
  let cur = obj;
  for (let i = 0; i < steps.length - 1; i++) {
    const s = steps[i];
    if (cur[s] === null || typeof cur[s] !== "object") cur[s] = typeof steps[i + 1] === "number" ? [] : {};
    cur = cur[s];
  }
  const last = steps[steps.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}

// pruneEmpty removes objects left empty by cleared fields.
export function pruneEmpty(obj) {
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v && typeof v === "object" && !Array.isArray(v)) {
      pruneEmpty(v);
      if (Object.keys(v).length === 0) delete obj[k];
    }
  }
}

// ---- values between inputs and JSON ----
export function readInput(el) {
  const type = el.dataset.type;
  if (el.tagName === "SELECT") {
    const o = el.selectedOptions[0];
    if (o && o.dataset.raw) return JSON.parse(o.dataset.raw);
  }
  if (type === "bool") return el.checked;
  const raw = el.value.trim();
  if (raw === "") return undefined;
  switch (type) {
    case "int":
    case "number":
    case "param": {
      if (type === "param" && (raw === "true" || raw === "false")) return raw === "true";
      const n = Number(raw);
      return raw !== "" && Number.isFinite(n) ? n : raw; // a unit string or a typo: the server says which
    }
    case "list": {
      if (/^\d+$/.test(raw)) return Number(raw);
      return raw.split(",").map((x) => x.trim()).filter((x) => x !== "");
    }
    default:
      return raw;
  }
}

export function writeInput(el, v) {
  if (el.tagName === "SELECT" && v !== undefined && v !== null) {
    // a value the list does not have (an inline CDF, a name the server
    // will call unknown) is kept as an option of its own
    const key = typeof v === "string" ? v : JSON.stringify(v);
    if (!Array.from(el.options).some((o) => o.value === key)) {
      const o = document.createElement("option");
      o.value = key;
      o.textContent = typeof v === "string" ? v + " (not in the list)" : "inline (edit in the JSON below)";
      o.dataset.raw = typeof v === "string" ? "" : key;
      el.appendChild(o);
    }
    el.value = key;
    return;
  }
  if (el.dataset.type === "bool") {
    el.checked = v === undefined ? el.dataset.default === "true" : !!v;
    return;
  }
  if (v === undefined || v === null) el.value = "";
  else if (Array.isArray(v)) el.value = v.join(", ");
  else el.value = String(v);
}
