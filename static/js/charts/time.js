// charts/time.js: the live multi-series chart of simulated time.

import { FONT_FAMILY, MARKER_STROKE, borderStyle, color, dash, pxr, scaledDash } from "./style.js";
import { UNITS, decimalsFor, fmt, fmtFor, prefixIndex, tickValues } from "./format.js";
import { axisSize, axisStyle, baseFontPx, downloadPng, h, legendA11y, needUPlot, observeSize, setAxisFonts, wireLegendKeys } from "./dom.js";
import { alignedGaps, lowerBound } from "./shape.js";

export const WINDOWS = [
  [0, "All"],
  [100e3, "100 µs"],
  [1e6, "1 ms"],
  [10e6, "10 ms"],
];

export function timeChart(el, opts) {
  const uPlot = needUPlot();
  const o = Object.assign({ title: "", unit: "", height: 260, windowNs: 0, log: false, yLabel: null }, opts || {});
  const unit = Object.prototype.hasOwnProperty.call(UNITS, o.unit || "") ? o.unit || "" : "";
  const fmtY = fmtFor(unit);
  let fontPx = baseFontPx(el);
  const style = axisStyle(fontPx);

  // State. `undefined` in a y array means "this series has no point at
  // this x" (uPlot spans over it); `null` is an explicit gap.
  const xs = [];
  const data = [xs]; // [xs, ys0, ys1, ...], handed to uPlot by reference
  const keyIdx = new Map(); // key -> 0-based series index
  const keys = []; // 0-based index -> key
  const markers = []; // sorted by t: {t, label}
  let points = 0;
  let following = true;
  let windowNs = Math.max(0, Number(o.windowNs) || 0);
  let highlight = null;
  let raf = 0;
  let destroyed = false;

  el.classList.add("chart");
  const title = o.title || "";
  const followBtn = h(
    "button",
    { type: "button", class: "btn small chart-follow", "aria-pressed": "true", title: "Follow the newest data (off: frozen, drag to zoom, double-click to reset)" },
    "Follow",
  );
  const winSel = h("select", { class: "chart-window-select" });
  const wins = WINDOWS.slice();
  if (windowNs && !wins.some((w) => w[0] === windowNs)) wins.push([windowNs, fmt.ns(windowNs)]);
  wins.sort((a, b) => a[0] - b[0]);
  for (const [v, label] of wins) winSel.append(h("option", { value: String(v) }, label));
  winSel.value = String(windowNs);
  const winLabel = h("label", { class: "chart-window" }, "Window ", winSel);
  const pngBtn = h("button", { type: "button", class: "btn small chart-png", title: "Download this chart as a PNG image" }, "PNG");
  const bar = h("div", { class: "toolbar chart-toolbar", role: "toolbar", "aria-label": (title || "Chart") + " controls" }, followBtn, winLabel, pngBtn);
  const host = h("div", { class: "chart-plot" });
  el.append(bar, host);
  el.dataset.points = "0";

  function xUnitIndex(u) {
    const sc = u.scales.x;
    const m = Math.max(Math.abs(sc.min || 0), Math.abs(sc.max || 0));
    return prefixIndex("ns", m);
  }

  function drawMarkers(u) {
    if (!markers.length) return;
    const sc = u.scales.x;
    if (sc.min == null || sc.max == null) return;
    const { left, top, width, height } = u.bbox;
    const r = pxr();
    const ctx = u.ctx;
    const fpx = Math.round(fontPx * 0.75 * r);
    const lineH = Math.round(fpx * 1.35);
    const padX = 3 * r;
    const rowEnds = [];
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    ctx.font = fpx + "px " + FONT_FAMILY;
    ctx.textBaseline = "top";
    ctx.textAlign = "left";
    for (let k = lowerBound(markers.map((m) => m.t), sc.min); k < markers.length; k++) {
      const m = markers[k];
      if (m.t > sc.max) break;
      const x = Math.round(u.valToPos(m.t, "x", true)) + 0.5;
      ctx.setLineDash([4 * r, 3 * r]);
      ctx.lineWidth = r;
      ctx.strokeStyle = MARKER_STROKE;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.stroke();
      if (!m.label) continue;
      const tw = ctx.measureText(m.label).width;
      let tx = x + padX;
      if (tx + tw + padX > left + width) tx = Math.max(left + padX, x - padX - tw);
      let row = 0;
      while (row < rowEnds.length && rowEnds[row] > tx - padX) row++;
      if (row > 3) row = 3;
      rowEnds[row] = tx + tw + padX;
      const ty = top + 2 * r + row * lineH;
      ctx.setLineDash([]);
      ctx.fillStyle = "rgba(255,255,255,0.88)";
      ctx.fillRect(tx - 2 * r, ty - r, tw + 4 * r, lineH);
      ctx.fillStyle = "#1f2328";
      ctx.fillText(m.label, tx, ty);
    }
    ctx.restore();
  }

  const uopts = {
    width: Math.max(240, Math.floor(host.clientWidth || el.clientWidth || 640)),
    height: Math.max(120, Number(o.height) || 260),
    title: title || undefined,
    scales: {
      x: {
        time: false,
        range: (u, min, max) => {
          if (min == null || max == null) return [0, 1];
          if (min === max) return [min - 1, max + 1];
          return [min, max];
        },
      },
      y: o.log ? { distr: 3, log: 10 } : {},
    },
    series: [{ label: "time", value: (u, v) => (v == null ? "—" : fmt.ns(v)) }],
    axes: [
      Object.assign({}, style, {
        label: (u) => "simulated time (" + UNITS.ns[xUnitIndex(u)] + ")",
        labelSize: Math.round(fontPx * 1.3),
        values: (u, splits, ai, space, incr) => {
          const div = Math.pow(1000, xUnitIndex(u));
          const dec = decimalsFor(incr / div);
          return splits.map((v) => (v == null ? null : v === 0 ? "0" : (v / div).toFixed(dec)));
        },
      }),
      Object.assign({}, style, {
        values: tickValues(unit, true),
        size: axisSize,
        label: o.yLabel || undefined,
        labelSize: o.yLabel ? Math.round(fontPx * 1.3) : undefined,
      }),
    ],
    cursor: { drag: { x: true, y: false, setScale: true } },
    legend: { live: true, markers: { dash: (u, i) => borderStyle(u.series[i]._ccDash) } },
    hooks: {
      draw: [drawMarkers],
      setSeries: [(u) => legendA11y(u)],
      addSeries: [(u) => legendA11y(u)],
      ready: [(u) => { legendA11y(u); wireLegendKeys(u); }],
    },
  };

  const u = new uPlot(uopts, data, host);

  // Dragging a zoom while following freezes the view first, so the
  // selection is kept (capture phase: runs before uPlot's mouseup).
  let downX = null;
  const onDown = (e) => {
    if (e.button === 0) downX = e.clientX;
  };
  const onUp = (e) => {
    if (downX != null && Math.abs(e.clientX - downX) > 3 && following) setFollowing(false, false);
    downX = null;
  };
  u.over.addEventListener("mousedown", onDown);
  window.addEventListener("mouseup", onUp, true);
  // After a dblclick reset in frozen mode uPlot shows the whole run; redraw
  // so markers and y range follow.
  u.over.addEventListener("dblclick", () => scheduleRedraw());

  const ro = observeSize(el, host, fontPx, (w, f) => {
    if (destroyed) return;
    if (f !== fontPx) {
      fontPx = f;
      setAxisFonts(u, f);
      u.setSize({ width: w - 1, height: uopts.height }); // force a re-layout
    }
    u.setSize({ width: w, height: uopts.height });
  });

  function setFollowing(on, redraw) {
    following = !!on;
    followBtn.setAttribute("aria-pressed", following ? "true" : "false");
    followBtn.textContent = following ? "Follow" : "Frozen";
    el.classList.toggle("frozen", !following);
    if (redraw !== false) scheduleRedraw();
  }
  followBtn.addEventListener("click", () => setFollowing(!following));
  winSel.addEventListener("change", () => {
    windowNs = Math.max(0, Number(winSel.value) || 0);
    setFollowing(true);
  });
  pngBtn.addEventListener("click", () => api.png());

  function flush() {
    raf = 0;
    if (destroyed) return;
    u.setData(data, false);
    if (xs.length) {
      let min, max;
      if (following) {
        max = xs[xs.length - 1];
        min = windowNs > 0 ? Math.max(xs[0], max - windowNs) : xs[0];
      } else {
        min = u.scales.x.min;
        max = u.scales.x.max;
        if (min == null || max == null || !Number.isFinite(min) || !Number.isFinite(max)) {
          min = xs[0];
          max = xs[xs.length - 1];
        }
      }
      if (max - min < 1e-9) {
        min -= 1;
        max += 1;
      }
      u.setScale("x", { min, max });
    } else {
      u.setData(data, true);
    }
    el.dataset.points = String(points);
  }

  function scheduleRedraw() {
    if (!raf && !destroyed) raf = requestAnimationFrame(flush);
  }

  function applyStyle(i) {
    const s = u.series[i + 1];
    if (!s) return;
    const on = !highlight || highlight.has(keys[i]);
    s.width = highlight ? (on ? 3 : 1) : 1.5;
    s.alpha = on ? 1 : 0.22;
    const rows = u.root.querySelectorAll(".u-legend tr.u-series");
    const off = rows.length - (u.series.length - 1);
    const tr = rows[i + off];
    if (tr) tr.classList.toggle("dim", !on);
  }

  // colorIdx, when given, picks the series' colour and dash (a flow keeps
  // its colour on every chart); else the series' own index does.
  function ensureSeries(key, label, colorIdx) {
    const k = String(key);
    let i = keyIdx.get(k);
    const text = label == null || label === "" ? k : String(label);
    if (i != null) {
      const s = u.series[i + 1];
      if (label != null && label !== "" && s.label !== text) {
        s.label = text;
        const rows = u.root.querySelectorAll(".u-legend tr.u-series");
        const tr = rows[i + rows.length - (u.series.length - 1)];
        const lab = tr && tr.querySelector(".u-label");
        if (lab) lab.textContent = text;
        legendA11y(u);
      }
      return i;
    }
    i = keys.length;
    keys.push(k);
    keyIdx.set(k, i);
    data.push([]);
    const ci = colorIdx == null || !Number.isFinite(Number(colorIdx)) ? i : Number(colorIdx);
    const d = dash(ci);
    u.addSeries({
      label: text,
      stroke: color(ci),
      width: 1.5,
      dash: scaledDash(d),
      _ccDash: d,
      spanGaps: false,
      gaps: alignedGaps,
      value: (uu, v) => (v == null ? "—" : fmtY(v)),
    });
    applyStyle(i);
    legendA11y(u);
    scheduleRedraw();
    return i;
  }

  function setPoint(ys, j, v) {
    while (ys.length < j) ys.push(undefined);
    const prev = ys[j];
    if (prev != null) points--;
    if (v != null) points++;
    ys[j] = v;
  }

  function append(key, tArray, vArray) {
    const i = ensureSeries(key);
    const ys = data[i + 1];
    const n = Math.min(tArray ? tArray.length : 0, vArray ? vArray.length : 0);
    for (let p = 0; p < n; p++) {
      const t = Number(tArray[p]);
      if (!Number.isFinite(t)) continue;
      let v = vArray[p];
      if (v === undefined) continue;
      if (v !== null) {
        v = Number(v);
        if (!Number.isFinite(v) || (o.log && v <= 0)) v = null;
      }
      const last = xs.length - 1;
      if (last < 0 || t > xs[last]) {
        // fast path: a new latest time
        xs.push(t);
        setPoint(ys, last + 1, v);
      } else if (t === xs[last]) {
        setPoint(ys, last, v);
      } else {
        const j = lowerBound(xs, t);
        if (xs[j] !== t) {
          // rare: a time inside the range that nobody had yet
          xs.splice(j, 0, t);
          for (let s = 1; s < data.length; s++) if (data[s].length > j) data[s].splice(j, 0, undefined);
        }
        setPoint(ys, j, v);
      }
    }
    scheduleRedraw();
  }

  function addMarker(tNs, label) {
    const t = Number(tNs);
    if (!Number.isFinite(t)) return;
    const m = { t, label: label == null ? "" : String(label) };
    let j = markers.length;
    while (j > 0 && markers[j - 1].t > t) j--;
    markers.splice(j, 0, m);
    scheduleRedraw();
  }

  function clear() {
    for (let s = u.series.length - 1; s >= 1; s--) u.delSeries(s);
    xs.length = 0;
    data.length = 1;
    keyIdx.clear();
    keys.length = 0;
    markers.length = 0;
    points = 0;
    highlight = null;
    u.setData(data, true);
    legendA11y(u);
    el.dataset.points = "0";
  }

  function destroy() {
    if (destroyed) return;
    destroyed = true;
    if (raf) cancelAnimationFrame(raf);
    raf = 0;
    if (ro) ro.disconnect();
    window.removeEventListener("mouseup", onUp, true);
    u.destroy();
    bar.remove();
    host.remove();
    el.classList.remove("frozen");
    delete el.dataset.points;
  }

  function setHighlight(ks) {
    if (ks == null) highlight = null;
    else {
      const arr = typeof ks === "string" ? [ks] : Array.from(ks);
      highlight = arr.length ? new Set(arr.map(String)) : null;
    }
    for (let i = 0; i < keys.length; i++) applyStyle(i);
    scheduleRedraw();
  }

  function setWindow(ns) {
    windowNs = Math.max(0, Number(ns) || 0);
    if (![...winSel.options].some((op) => op.value === String(windowNs))) winSel.append(h("option", { value: String(windowNs) }, fmt.ns(windowNs)));
    winSel.value = String(windowNs);
    scheduleRedraw();
  }

  const api = {
    el,
    uplot: u,
    ensureSeries,
    append,
    addMarker,
    follow(on) {
      setFollowing(on === undefined ? true : !!on);
    },
    following: () => following,
    setWindow,
    window: () => windowNs,
    png: (filename) => {
      if (raf) {
        cancelAnimationFrame(raf);
        flush();
      }
      return downloadPng(u, title, filename, fontPx);
    },
    redraw: scheduleRedraw,
    pointCount: () => points,
    seriesKeys: () => keys.slice(),
    clear,
    destroy,
    setHighlight,
  };
  return api;
}

// -------------------------------------------------- static (set-once) charts
