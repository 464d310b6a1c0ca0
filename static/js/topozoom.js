// topozoom.js: keeps the topology view readable however large it is: zoom
// (buttons, Ctrl/⌘ + wheel) and pan (drag) through the SVG's viewBox, and
// pods that collapse into one box each. A pod is a connected group of
// hosts and switches once the top tier (the cores) is left out; a
// topology of more than LARGE_HOSTS hosts opens with its pods collapsed.
// It re-arms itself whenever the lab redraws the SVG.

export const LARGE_HOSTS = 300;
const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  e.append(...kids);
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

// portEnds: "a->b#1" -> ["a", "b"].
export function portEnds(port) {
  const i = port.indexOf("->");
  if (i < 0) return null;
  return [port.slice(0, i), port.slice(i + 2).split("#")[0]];
}

// findPods groups nodes into pods: nodes {name: {y, host}}, links [[a, b]].
// The top tier (smallest y) is left out; the connected groups of what is
// left that hold a host are the pods (fewer than two: none). Returns
// [[name, ...], ...].
export function findPods(nodes, links) {
  const ys = [...new Set(Object.values(nodes).map((n) => n.y))].sort((a, b) => a - b);
  if (ys.length < 3) return [];
  const top = ys[0];
  const parent = {};
  const find = (x) => (parent[x] === x ? x : (parent[x] = find(parent[x])));
  for (const [name, n] of Object.entries(nodes)) if (n.y !== top) parent[name] = name;
  for (const [a, b] of links) {
    if (parent[a] === undefined || parent[b] === undefined) continue;
    const ra = find(a), rb = find(b);
    if (ra !== rb) parent[ra] = rb;
  }
  const groups = new Map();
  for (const name of Object.keys(parent)) {
    const r = find(name);
    if (!groups.has(r)) groups.set(r, []);
    groups.get(r).push(name);
  }
  const pods = [...groups.values()].filter((g) => g.some((n) => nodes[n].host));
  return pods.length >= 2 ? pods : [];
}

export function bindTopoZoom() {
  const box = document.getElementById("topology-view");
  if (!box) return;
  const btn = (id, label, title) => el("button", { type: "button", class: "btn small", id, title, "aria-label": title }, label);
  const zin = btn("topo-zoom-in", "+", "Zoom in");
  const zout = btn("topo-zoom-out", "−", "Zoom out");
  const fit = btn("topo-fit", "Fit", "Show the whole topology");
  const pods = btn("topo-pods", "Expand all pods", "Collapse or expand every pod");
  const info = el("span", { class: "muted small", id: "topo-info" });
  const bar = el("div", { class: "toolbar topo-tools", role: "toolbar", "aria-label": "Topology view" }, zin, zout, fit, pods, info);
  box.before(bar);
  let st = null;

  function setView() {
    const c = st.cur;
    st.svg.setAttribute("viewBox", [c.x, c.y, c.w, c.h].map((v) => v.toFixed(1)).join(" "));
    box.dataset.zoom = (st.view.w / c.w).toFixed(2);
    // pod labels keep a readable size on screen
    const r = st.svg.getBoundingClientRect();
    const px = Math.min((r.width || 900) / c.w, (r.height || 1e9) / c.h); // the drawing is fitted, letterboxed
    for (const t of st.layer.querySelectorAll("text")) t.setAttribute("font-size", (12 / px).toFixed(2));
  }

  function zoom(f, fx, fy) {
    if (!st) return;
    const c = st.cur, full = st.view;
    // zooming narrows the view; every tier stays in it until the view is
    // 1.5 times as wide as tall (the drawing gets taller on screen)
    const w = Math.min(full.w, Math.max(Math.min(full.w, full.h) / 4, c.w / f));
    const h = Math.min(full.h, w / 1.5);
    const px = fx == null ? 0.5 : fx, py = fy == null ? 0.5 : fy;
    const cx = c.x + px * c.w, cy = c.y + py * c.h;
    st.cur = { x: cx - px * w, y: cy - py * h, w, h };
    clamp();
    setView();
  }

  function clamp() {
    const c = st.cur, full = st.view;
    c.x = Math.min(full.x + full.w - c.w, Math.max(full.x, c.x));
    c.y = Math.min(full.y + full.h - c.h, Math.max(full.y, c.y));
  }

  function showPodState() {
    const n = st.pods.length;
    const shut = st.pods.filter((p) => p.collapsed).length;
    box.dataset.pods = String(n);
    box.dataset.collapsed = String(shut);
    pods.hidden = n === 0;
    pods.textContent = shut > 0 ? "Expand all pods" : "Collapse all pods";
    info.textContent = st.hosts + " hosts" + (n ? ", " + n + " pods" + (shut ? " (" + shut + " collapsed: click one to open it)" : "") : "") +
      (st.hosts > LARGE_HOSTS ? "; drag to pan, Ctrl + wheel to zoom" : "");
  }

  function setCollapsed(p, on) {
    p.collapsed = on;
    for (const name of p.members) {
      const n = st.nodes[name];
      if (n) n.el.classList.toggle("collapsed", on);
    }
    for (const g of p.links) g.classList.toggle("collapsed", on);
  }

  // layout squeezes each collapsed pod's stretch of the drawing to a box
  // (a piecewise-linear map of x: open pods keep their width, the cores
  // above move with them), then redraws the pod boxes.
  function layout() {
    const { svg, full, nodes, pods } = st;
    const segs = [];
    let lo = full.x;
    pods.forEach((p, i) => {
      const next = pods[i + 1];
      const hi = next ? (p.x1 + next.x0) / 2 : full.x + full.w;
      segs.push({ lo, hi, k: p.collapsed ? st.squeeze : 1 });
      lo = hi;
    });
    if (!segs.length) segs.push({ lo: full.x, hi: full.x + full.w, k: 1 });
    let acc = full.x;
    for (const sg of segs) { sg.at = acc; acc += (sg.hi - sg.lo) * sg.k; }
    const f = (x) => {
      for (const sg of segs) if (x <= sg.hi) return sg.at + (Math.max(x, sg.lo) - sg.lo) * sg.k;
      const sg = segs[segs.length - 1];
      return sg.at + (sg.hi - sg.lo) * sg.k;
    };
    for (const n of Object.values(nodes)) {
      const dx = f(n.x) - n.x;
      if (dx) n.el.setAttribute("transform", "translate(" + dx.toFixed(1) + ",0)");
      else n.el.removeAttribute("transform");
    }
    for (const l of st.lines) {
      l.el.setAttribute("x1", f(l.x1).toFixed(1));
      l.el.setAttribute("x2", f(l.x2).toFixed(1));
    }
    st.f = f;
    const w = acc - full.x;
    st.view = { x: full.x, y: full.y, w, h: full.h };
    st.cur = { ...st.view };
    const font = 12;
    st.layer.textContent = "";
    pods.forEach((p, i) => {
      if (!p.collapsed) return;
      const sg = segs[i];
      const pad = Math.max(0.5, Math.min(12, ((sg.hi - sg.lo) * sg.k - (f(p.x1) - f(p.x0))) / 2 - 1));
      const x0 = f(p.x0) - pad, x1 = f(p.x1) + pad;
      const glyph = svgEl("g", { class: "pod", "data-pod": i, tabindex: 0, role: "button", "aria-label": "pod " + (i + 1) + ": " + p.hosts + " hosts, " + (p.members.length - p.hosts) + " switches; open it" });
      for (const o of p.outside) {
        const n = nodes[o];
        if (n) glyph.append(svgEl("line", { class: "pod-link", x1: (x0 + x1) / 2, y1: p.y0, x2: f(n.x), y2: n.y }));
      }
      glyph.append(svgEl("rect", { x: x0, y: p.y0, width: Math.max(1, x1 - x0), height: p.y1 - p.y0, rx: 4 }));
      const label = svgEl("text", { x: (x0 + x1) / 2, y: (p.y0 + p.y1) / 2, "text-anchor": "middle", "dominant-baseline": "middle", "font-size": font.toFixed(2) });
      label.textContent = "pod " + (i + 1);
      const title = svgEl("title", {});
      title.textContent = "pod " + (i + 1) + ": " + p.hosts + " hosts, " + (p.members.length - p.hosts) + " switches (click to open)";
      glyph.append(label, title);
      st.layer.append(glyph);
    });
    setView();
    showPodState();
  }

  function setup() {
    const svg = box.querySelector("svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal) {
      bar.hidden = true;
      st = null;
      return;
    }
    if (st && st.svg === svg) return; // our own changes
    bar.hidden = false;
    const vb = svg.viewBox.baseVal;
    const full = { x: vb.x, y: vb.y, w: vb.width, h: vb.height };
    const nodes = {};
    for (const g of svg.querySelectorAll(".node")) {
      const r = g.querySelector("rect"), c = g.querySelector("circle");
      const x = r ? Number(r.getAttribute("x")) + 9 : Number(c.getAttribute("cx"));
      const y = r ? Number(r.getAttribute("y")) + 7 : Number(c.getAttribute("cy"));
      nodes[g.dataset.node] = { el: g, x, y, host: g.classList.contains("host") };
    }
    const links = [];
    const linkEls = [];
    const lines = [];
    for (const g of svg.querySelectorAll("g.link")) {
      const p = g.querySelector("[data-port]");
      const ends = p && portEnds(p.dataset.port);
      if (!ends) continue;
      links.push(ends);
      linkEls.push({ g, ends });
      for (const ln of g.querySelectorAll("line")) lines.push({ el: ln, x1: Number(ln.getAttribute("x1")), x2: Number(ln.getAttribute("x2")) });
    }
    const hosts = Object.values(nodes).filter((n) => n.host).length;
    const layer = svgEl("g", { class: "pod-layer" });
    svg.append(layer);
    st = { svg, full, cur: { ...full }, view: { ...full }, nodes, hosts, lines, layer, pods: [] };
    for (const members of findPods(nodes, links)) {
      const set = new Set(members);
      const xs = members.map((m) => nodes[m].x), ys = members.map((m) => nodes[m].y);
      const outside = new Set();
      const mine = [];
      for (const l of linkEls) {
        const a = set.has(l.ends[0]), b = set.has(l.ends[1]);
        if (a || b) mine.push(l.g);
        if (a && !b) outside.add(l.ends[1]);
        else if (b && !a) outside.add(l.ends[0]);
      }
      st.pods.push({ members, links: mine, outside, hosts: members.filter((m) => nodes[m].host).length, collapsed: false,
        x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys) - 14, y1: Math.max(...ys) + 10 });
    }
    st.pods.sort((a, b) => a.x0 - b.x0);
    // a collapsed pod's share of the width: enough for the cores above and
    // a box per pod
    const topY = Math.min(...Object.values(nodes).map((n) => n.y));
    const tops = Object.values(nodes).filter((n) => n.y === topY).length;
    const podW = st.pods.length ? (st.pods[0].x1 - st.pods[0].x0 + 36) : full.w;
    st.squeeze = Math.min(1, Math.max(36 * tops / Math.max(1, st.pods.length), 120) / podW);
    for (const p of st.pods) setCollapsed(p, hosts > LARGE_HOSTS);
    box.dataset.hosts = String(hosts);
    layout();
  }

  function openPod(g) {
    const p = st && st.pods[Number(g.dataset.pod)];
    if (!p) return;
    setCollapsed(p, false);
    layout();
    // and show it
    const x0 = st.f(p.x0) - 30, x1 = st.f(p.x1) + 30;
    st.cur = { x: x0, y: st.view.y, w: x1 - x0, h: Math.min(st.view.h, (x1 - x0) / 1.5) };
    clamp();
    setView();
  }

  zin.addEventListener("click", () => zoom(2));
  zout.addEventListener("click", () => zoom(0.5));
  fit.addEventListener("click", () => { if (st) { st.cur = { ...st.view }; setView(); } });
  pods.addEventListener("click", () => {
    if (!st) return;
    const shut = st.pods.some((p) => p.collapsed);
    for (const p of st.pods) setCollapsed(p, !shut);
    layout();
  });
  box.addEventListener("click", (ev) => {
    const g = ev.target.closest && ev.target.closest(".pod");
    if (g) openPod(g);
  });
  box.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const g = ev.target.closest && ev.target.closest(".pod");
    if (g) { ev.preventDefault(); openPod(g); }
  });
  box.addEventListener("wheel", (ev) => {
    if (!st || !(ev.ctrlKey || ev.metaKey)) return;
    ev.preventDefault();
    const r = st.svg.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.25 : 0.8, (ev.clientX - r.left) / r.width, (ev.clientY - r.top) / r.height);
  }, { passive: false });
  // drag to pan (not from a port, host or pod: those are clicked)
  let drag = null;
  box.addEventListener("pointerdown", (ev) => {
    if (!st || ev.button !== 0 || ev.target.closest("[data-port], .node.host, .pod")) return;
    if (st.cur.w >= st.view.w) return; // nothing to pan
    drag = { x: ev.clientX, y: ev.clientY, cur: { ...st.cur } };
    box.setPointerCapture(ev.pointerId);
  });
  box.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const r = st.svg.getBoundingClientRect();
    const k = st.cur.w / r.width;
    st.cur = { ...drag.cur, x: drag.cur.x - (ev.clientX - drag.x) * k, y: drag.cur.y - (ev.clientY - drag.y) * k };
    clamp();
    setView();
  });
  const end = () => { drag = null; };
  box.addEventListener("pointerup", end);
  box.addEventListener("pointercancel", end);
  new MutationObserver(setup).observe(box, { childList: true });
  setup();
}
