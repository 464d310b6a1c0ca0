// train.js: the training page. The form starts a training job
// (POST /api/train); the job's status, stage and learning curve come over
// its WebSocket (/ws/train/{id}: the rounds so far, then each new one) and
// are drawn; a cancelled or interrupted job can be resumed
// (POST /api/train/{id}/resume); the stored policies (GET /api/policies)
// can be downloaded, deleted and uploaded.
import { api, clientId } from "./common.js";
import { xyChart } from "./charts/index.js";

const $ = (id) => document.getElementById(id);
const data = JSON.parse($("train-data").textContent);

const charts = {
  reward: xyChart($("chart-train-reward"), { title: "Reward (mean of each round's episodes)", xLabel: "episode", yLabel: "reward" }),
  loss: xyChart($("chart-train-loss"), { title: "Loss (TD3: the critics'; ADPG: the actor's)", xLabel: "episode", yLabel: "loss" }),
  slowdown: xyChart($("chart-train-slowdown"), { title: "Evaluation: mean FCT slowdown", xLabel: "episode", yLabel: "× ideal" }),
  unfair: xyChart($("chart-train-unfair"), { title: "Evaluation: unfair ratio", xLabel: "episode", yLabel: "(max − mean) / mean" }),
  queue: xyChart($("chart-train-queue"), { title: "Evaluation: peak queue", xLabel: "episode", yLabel: "KB" }),
};

let current = null; // the id of the job followed
let job = null; // the job followed, as its stream tells it (curve: by episode)
let ws = null;
let drawTimer = null;

const live = (s) => s === "queued" || s === "running";

// ---- the form ----
function clearErrors(form) {
  for (const el of form.querySelectorAll(".error[data-error-for]")) el.textContent = "";
  $("train-form-status").textContent = "";
}

function showError(e) {
  const field = e.body && e.body.field;
  const box = field && document.querySelector('#train-form .error[data-error-for="' + CSS.escape(field) + '"]');
  if (box) box.textContent = e.message;
  else $("train-form-status").textContent = (field ? field + ": " : "") + e.message;
}

// Choosing an algorithm fills the form with its training defaults (RL-CC
// trains by ADPG with its own width and curriculum).
$("t-algo").addEventListener("change", () => {
  const d = (data.algos || {})[$("t-algo").value];
  if (!d) return;
  $("t-episodes").value = d.episodes;
  $("t-hidden").value = d.hidden;
  $("t-stages").value = d.stages;
  $("t-stage-episodes").value = d.stageEpisodes;
  $("t-size").value = d.size;
});

$("train-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = $("train-form");
  clearErrors(form);
  const num = (id) => ($(id).value.trim() === "" ? undefined : Number($(id).value));
  const body = {
    algo: $("t-algo").value,
    name: $("t-name").value.trim(),
    episodes: num("t-episodes"),
    hidden: num("t-hidden"),
    seed: num("t-seed"),
    stageEpisodes: num("t-stage-episodes"),
    stages: $("t-stages").value.trim() || undefined,
    size: $("t-size").value.trim() || undefined,
  };
  $("train-start").disabled = true;
  try {
    const job = await api("POST", "/api/train", body);
    follow(job.id);
    refreshJobs();
  } catch (e) {
    showError(e);
  } finally {
    $("train-start").disabled = false;
  }
});

// ---- the job followed ----
function follow(id) {
  current = id;
  const u = new URL(location.href);
  u.searchParams.set("job", id);
  history.replaceState(null, "", u);
  $("train-job").hidden = false;
  watch(id);
}

// watch follows a job over its stream: hello (the job), a round per
// training round, status when it changes, done at the end.
function watch(id) {
  if (ws) { ws.onclose = null; ws.close(); }
  job = null;
  const sock = new WebSocket((location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/ws/train/" + encodeURIComponent(id));
  ws = sock;
  sock.onmessage = (ev) => {
    if (id !== current) return;
    const m = JSON.parse(ev.data);
    switch (m.type) {
      case "hello":
        job = Object.assign(m.job, { points: new Map() });
        break;
      case "round":
        delete m.type;
        job.points.set(m.episode, m); // a resumed job sends the rounds since its checkpoint again
        break;
      case "status":
        Object.assign(job, { status: m.status, episode: m.episode, episodes: m.episodes, stage: m.stage, error: m.error || "" });
        break;
      case "done":
        Object.assign(job, { status: m.status, error: m.error || "", policy: m.policy, interrupted: m.interrupted, resumable: m.resumable });
        refreshPolicies();
        refreshJobs();
        break;
      case "error":
        $("train-status").textContent = m.error;
        return;
    }
    scheduleDraw();
  };
  sock.onclose = () => {
    if (ws !== sock) return;
    ws = null;
    if (job && live(job.status)) {
      // the stream was lost while the job goes on: follow it again
      setTimeout(() => { if (current === id && !ws) watch(id); }, 2000);
    } else if (!job) {
      $("train-status").textContent = "there is no training job " + id + " on this server";
      $("train-status").dataset.status = "gone";
    }
  };
}

function scheduleDraw() {
  if (drawTimer || !job) return;
  drawTimer = setTimeout(() => {
    drawTimer = null;
    if (job) draw(Object.assign({}, job, { curve: Array.from(job.points.values()).sort((a, b) => a.episode - b.episode) }));
  }, 150);
}

function statusText(job) {
  let s = job.status + " · episode " + job.episode + " of " + job.episodes + " · stage " + job.stage + "-to-1";
  if (job.status === "done") s += " · policy stored as “" + job.name + "”";
  if (job.interrupted) s += " · policy stored as “" + job.name + "”, marked interrupted";
  if (job.resumable) s += " · can be resumed";
  if (job.error) s += " · " + job.error;
  return s;
}

function draw(job) {
  $("train-job-name").textContent = job.name + " (" + job.algo + ")";
  const st = $("train-status");
  st.textContent = statusText(job);
  st.dataset.status = job.status;
  $("train-progress").value = job.episodes ? job.episode / job.episodes : 0;
  // only the job's owner (or an instructor) may stop or resume it (the
  // stream's hello says so in job.mine)
  $("train-cancel").hidden = !job.mine;
  $("train-cancel").disabled = !live(job.status);
  $("train-resume").hidden = !job.resumable || !job.mine;
  $("train-curve-csv").href = job.links.curve;
  // the job's row in the list follows it
  const row = document.querySelector('#train-jobs tr[data-id="' + CSS.escape(job.id) + '"]');
  if (row && row.cells.length >= 4) {
    row.cells[2].textContent = job.status + (job.error ? ": " + job.error : "");
    row.cells[3].textContent = job.episode + " / " + job.episodes;
  }
  const c = job.curve || [];
  charts.reward.set([{ label: "reward", points: c.map((p) => [p.episode, p.reward]) }]);
  // TD3's critic loss; ADPG has no critic, its loss is the actor's.
  if (job.config && job.config.method === "adpg") charts.loss.set([{ label: "ADPG loss", points: c.map((p) => [p.episode, p.actorLoss]) }]);
  else charts.loss.set([{ label: "critic loss", points: c.map((p) => [p.episode, p.criticLoss]) }]);
  const ev = c.filter((p) => p.eval);
  $("train-eval").hidden = ev.length === 0;
  if (ev.length > 0) {
    const fanIns = job.config.evalFanIns || [];
    charts.slowdown.set(fanIns.map((n, i) => ({ label: n + "-to-1", points: ev.map((p) => [p.episode, p.eval.slowdown[i]]) })));
    charts.unfair.set(fanIns.map((n, i) => ({ label: n + "-to-1", points: ev.map((p) => [p.episode, p.eval.unfair[i]]) })));
    charts.queue.set(fanIns.map((n, i) => ({ label: n + "-to-1", points: ev.map((p) => [p.episode, p.eval.peakQueueBytes[i] / 1e3]) })));
  }
}

$("train-cancel").addEventListener("click", async () => {
  if (!current) return;
  $("train-cancel").disabled = true;
  try {
    await api("POST", "/api/train/" + encodeURIComponent(current) + "/cancel");
  } catch (e) {
    $("train-status").textContent = e.message;
  }
  // the stream tells the end (the policy it stored)
});

async function resume(id) {
  try {
    await api("POST", "/api/train/" + encodeURIComponent(id) + "/resume");
    follow(id);
  } catch (e) {
    $("train-status").textContent = e.message;
  }
  refreshJobs();
}

$("train-resume").addEventListener("click", () => { if (current) resume(current); });

// ---- lists ----
function cell(tr, content) {
  const td = document.createElement("td");
  if (content instanceof Node) td.append(content);
  else td.textContent = content == null ? "" : String(content);
  tr.append(td);
  return td;
}

async function refreshJobs() {
  let jobs = [];
  try { jobs = await api("GET", "/api/train"); } catch (e) { return; }
  const body = document.querySelector("#train-jobs tbody");
  body.replaceChildren(...jobs.map((j) => {
    const tr = document.createElement("tr");
    tr.dataset.id = j.id;
    cell(tr, j.name);
    cell(tr, j.algo);
    cell(tr, j.status + (j.error ? ": " + j.error : ""));
    cell(tr, j.episode + " / " + j.episodes);
    const actions = document.createElement("span");
    const b = Object.assign(document.createElement("button"), { type: "button", className: "btn small", textContent: "Show" });
    b.addEventListener("click", () => follow(j.id));
    actions.append(b);
    if (j.resumable) {
      const r = Object.assign(document.createElement("button"), { type: "button", className: "btn small", textContent: "Resume" });
      r.setAttribute("aria-label", "Resume " + j.name);
      r.addEventListener("click", () => resume(j.id));
      actions.append(" ", r);
    }
    cell(tr, actions);
    return tr;
  }));
  if (jobs.length === 0) {
    const tr = document.createElement("tr");
    cell(tr, "none yet").colSpan = 5;
    body.append(tr);
  }
}

async function refreshPolicies() {
  let list = [];
  try { list = await api("GET", "/api/policies"); } catch (e) { return; }
  const body = document.querySelector("#policies tbody");
  body.replaceChildren(...list.map((p) => {
    const tr = document.createElement("tr");
    tr.dataset.name = p.name;
    cell(tr, p.name);
    cell(tr, p.algorithm);
    cell(tr, p.source === "upload" || p.source === "shipped" ? p.source : "training job " + p.source);
    cell(tr, (p.meta.episodes || "") + (p.meta.interrupted === "true" ? " (interrupted)" : ""));
    cell(tr, p.createdAt ? new Date(p.createdAt).toLocaleString() : "");
    const actions = document.createElement("span");
    const a = Object.assign(document.createElement("a"), { href: p.links.file, textContent: "Download", className: "btn small" });
    a.setAttribute("download", p.name + ".safetensors");
    actions.append(a);
    if (!p.builtin && p.mine) {
      const del = Object.assign(document.createElement("button"), { type: "button", className: "btn small danger", textContent: "Delete" });
      del.addEventListener("click", async () => {
        if (!window.confirm("Delete the policy “" + p.name + "”? Runs that used it keep their results.")) return;
        try {
          await api("DELETE", "/api/policies/" + encodeURIComponent(p.id));
        } catch (e) {
          window.alert(e.message);
        }
        refreshPolicies();
      });
      actions.append(" ", del);
    }
    cell(tr, actions);
    return tr;
  }));
  if (list.length === 0) {
    const tr = document.createElement("tr");
    cell(tr, "none yet: train one above, or upload a file").colSpan = 6;
    body.append(tr);
  }
}

// ---- upload ----
$("upload-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = $("upload-form");
  const status = $("upload-status");
  const file = $("u-file").files[0];
  if (file && file.size > data.maxFileBytes) {
    status.textContent = "the file is over " + data.maxFileBytes / (1 << 20) + " MiB";
    return;
  }
  status.textContent = "uploading…";
  try {
    const resp = await fetch("/api/policies", { method: "POST", body: new FormData(form), headers: { "X-Cclab-Client": clientId() } });
    const ans = await resp.json().catch(() => null);
    if (!resp.ok) throw new Error(((ans && ans.field) ? ans.field + ": " : "") + ((ans && ans.error) || resp.statusText));
    status.textContent = "stored as “" + ans.name + "”";
    form.reset();
    refreshPolicies();
  } catch (e) {
    status.textContent = e.message;
  }
});

refreshPolicies();
refreshJobs();
const start = new URL(location.href).searchParams.get("job");
if (start) follow(start);
