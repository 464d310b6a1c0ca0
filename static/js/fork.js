// fork.js: the lab's word on a saved scenario that is new. Scenarios are
// stored by content, so an edited scenario is another one with its own id
// and link (the original stays as it was); when only its congestion
// control ("cc") changed, runs of the two are still compared as one
// scenario (the compare page ignores "cc"). The pure parts are tested by
// node (static/jstest/fork.test.js).

// stable writes a JSON value with its object keys sorted.
export function stable(v) {
  if (Array.isArray(v)) return "[" + v.map(stable).join(",") + "]";
  if (v && typeof v === "object") {
    return "{" + Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => JSON.stringify(k) + ":" + stable(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

// sameWorkload reports whether two scenario documents differ at most in
// their "cc".
export function sameWorkload(a, b) {
  const strip = (d) => { const c = Object.assign({}, d); delete c.cc; return stable(c); };
  return strip(a || {}) === strip(b || {});
}

// forkNote is what the lab says when saving gave a new id: null when it
// did not (or there was no earlier scenario).
export function forkNote(prevId, prevDoc, doc, id) {
  if (!prevId || prevId === id) return null;
  const algo = (doc.cc && doc.cc.algorithm) || "";
  if (sameWorkload(prevDoc, doc)) {
    return { same: true, text: "Saved as scenario " + id + ": the same scenario as " + prevId + " with another congestion control (" + algo +
      "). Compare treats runs of both as runs of one scenario." };
  }
  return { same: false, text: "Saved as a new scenario " + id + " (edited from " + prevId + ", which stays as it was)." };
}

// showForkNote puts the note under the lab's toolbar (or removes it).
export function showForkNote(note, prevId) {
  let p = document.getElementById("fork-note");
  if (!note) { if (p) p.remove(); return; }
  if (!p) {
    p = document.createElement("p");
    p.id = "fork-note";
    p.className = "notice small";
    p.setAttribute("role", "status");
    document.getElementById("form-errors").before(p);
  }
  p.dataset.same = note.same ? "true" : "false";
  p.textContent = note.text + " ";
  const a = document.createElement("a");
  a.href = "/s/" + encodeURIComponent(prevId);
  a.textContent = "Open " + prevId;
  p.append(a);
}

// noteFork tells, under the toolbar, that saving made scenario id from
// prevId, comparing the two stored (canonical) documents; api is
// common.js's.
export async function noteFork(api, prevId, id) {
  if (!prevId || prevId === id) return;
  try {
    const [a, b] = await Promise.all([api("GET", "/api/scenarios/" + encodeURIComponent(prevId)), api("GET", "/api/scenarios/" + encodeURIComponent(id))]);
    showForkNote(forkNote(prevId, a.scenario, b.scenario, id), prevId);
  } catch (e) { /* the note is a courtesy */ }
}
