// import-ns3.js: the lab page's "Import ns-3…" control. It sends the three
// files of an HPCC ns-3 experiment (config.txt, topology, flows) to
// POST /api/import/ns3 and opens the scenario it answers in the editor,
// through the editor's own "Apply JSON"; the config keys the lab does not
// understand and the algorithm keys the config leaves out are listed under
// the control, and a bad file's error names its file, line and field.
import { clientId } from "./common.js";
import { warningText } from "./guide.js";

const $ = (sel) => document.querySelector(sel);

async function importNS3() {
  const status = $("#ns3-import-status");
  const errors = $("#ns3-import-errors");
  const list = $("#ns3-import-warnings");
  errors.textContent = "";
  list.replaceChildren();
  list.hidden = true;
  status.textContent = "";
  const form = new FormData();
  for (const [part, id] of [["config", "#ns3-config"], ["topology", "#ns3-topology"], ["flows", "#ns3-flows"]]) {
    const file = $(id).files[0];
    if (!file) {
      errors.textContent = "Choose the " + (part === "config" ? "config.txt" : part === "topology" ? "topology file" : "flow file") + " first.";
      return;
    }
    form.append(part, file, file.name);
  }
  if ($("#json-apply").disabled) {
    errors.textContent = "A run is in progress: stop it before importing.";
    return;
  }
  status.textContent = "Importing…";
  let data = null;
  let resp;
  try {
    resp = await fetch("/api/import/ns3", { method: "POST", body: form, headers: { "X-Cclab-Client": clientId() } });
    const text = await resp.text();
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  } catch (e) {
    status.textContent = "";
    errors.textContent = "The import failed: " + e.message;
    return;
  }
  status.textContent = "";
  if (!resp.ok) {
    errors.textContent = (data && data.error) || ("The import failed: HTTP " + resp.status);
    return;
  }
  // the editor's own path: its JSON text, applied
  $("#json-text").value = JSON.stringify(data.scenario, null, 2);
  $("#json-apply").click();
  const flows = (data.scenario.workload || []).reduce((n, w) => n + (w.flows ? w.flows.length : 0), 0);
  status.textContent = "Imported " + (data.scenario.name || "the experiment") + ": " + flows + " flows, " +
    data.scenario.cc.algorithm + ".";
  if (data.warnings && data.warnings.length > 0) {
    const head = document.createElement("li");
    head.textContent = warningText(data.warnings);
    list.append(head);
    for (const w of data.warnings) {
      const li = document.createElement("li");
      li.className = "warning";
      li.textContent = w;
      list.append(li);
    }
    list.hidden = false;
  }
}

const btn = $("#ns3-import-btn");
if (btn) btn.addEventListener("click", importNS3);
