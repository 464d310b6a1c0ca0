/*
 * charts.js — CCCharts, the lab's small chart library over uPlot.
 *
 * Plain ES2020 in one IIFE, no modules, no build step, no dependency but
 * window.uPlot (static/vendor/uplot/uPlot.iife.min.js and uPlot.min.css,
 * loaded first). Exposes window.CCCharts:
 *
 *   palette, color(i), dash(i)       colour-blind-safe series styling
 *   fmt.bytes / bps / ns / num       value formatters
 *   timeChart(el, opts)              live multi-series chart of simulated time
 *   cdfChart(el, opts)               CDFs, one line per entry
 *   sizeChart(el, opts)              FCT slowdown by flow-size bucket (p50/p95/p99)
 *   running(values)                  bounded reservoir with p50/p99
 *
 * Simulated times are integers or floats in nanoseconds throughout.
 */
(function () {
  "use strict";

  const FONT_FAMILY =
    'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
  const AXIS_STROKE = "#1f2328";
  const GRID_STROKE = "rgba(0,0,0,0.09)";
  const MARKER_STROKE = "rgba(35,35,35,0.8)";

  // ---------------------------------------------------------------- styling

  // Okabe–Ito first, then Paul Tol's darker "muted"/"bright" picks that stay
  // apart from them (wine, indigo, olive, brown) and a neutral grey.
  const palette = Object.freeze([
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#882255", "#332288", "#999933", "#661100", "#888888",
  ]);

  // After the palette wraps, lines change dash so they stay distinguishable
  // without colour. Lengths are CSS pixels.
  const DASHES = [[], [10, 4], [2, 3], [10, 3, 2, 3], [5, 5]];

  function mod(i, n) {
    i = Math.floor(Number(i) || 0);
    return ((i % n) + n) % n;
  }
  function color(i) {
    return palette[mod(i, palette.length)];
  }
  function dash(i) {
    const k = Math.floor(Math.max(0, Math.floor(Number(i) || 0)) / palette.length);
    return DASHES[k % DASHES.length].slice();
  }
  // CSS border-style that best matches a dash pattern (legend markers).
  function borderStyle(d) {
    if (!d || d.length === 0) return "solid";
    return d[0] <= 3 ? "dotted" : "dashed";
  }
  function pxr() {
    return (window.uPlot && window.uPlot.pxRatio) || window.devicePixelRatio || 1;
  }
  function scaledDash(d) {
    const r = pxr();
    return (d || []).map((v) => v * r);
  }

  // ------------------------------------------------------------- formatting

  // Three significant digits, trailing zeros trimmed.
  function sig3(x) {
    if (x === 0) return "0";
    const a = Math.abs(x);
    if (a >= 1000) return String(Math.round(x));
    if (a < 1e-3) return x.toExponential(2);
    return String(Number(x.toPrecision(3)));
  }

  const UNITS = {
    bytes: ["B", "KB", "MB", "GB", "TB", "PB"],
    bps: ["bps", "Kbps", "Mbps", "Gbps", "Tbps"],
    ns: ["ns", "µs", "ms", "s"],
    "": ["", "k", "M", "G", "T"],
  };

  // Index of the decimal (×1000) prefix to show `a` (>= 0) with, so that the
  // scaled value lies in [1, 1000). Plain numbers only get a prefix from 10^4.
  function prefixIndex(unit, a) {
    const names = UNITS[unit] || UNITS[""];
    if (unit === "" && a < 1e4) return 0;
    let i = 0;
    while (i < names.length - 1 && a >= Math.pow(1000, i + 1) * 0.9995) i++;
    return i;
  }

  function unitFormatter(unit) {
    const names = UNITS[unit] || UNITS[""];
    return function (v) {
      if (v == null || v === "") return "";
      v = Number(v);
      if (Number.isNaN(v)) return "";
      if (!Number.isFinite(v)) return v > 0 ? "∞" : "−∞";
      const i = prefixIndex(unit, Math.abs(v));
      const s = sig3(v / Math.pow(1000, i));
      return names[i] ? s + " " + names[i] : s;
    };
  }

  const fmt = Object.freeze({
    bytes: unitFormatter("bytes"),
    bps: unitFormatter("bps"),
    ns: unitFormatter("ns"),
    num: unitFormatter(""),
  });

  function fmtFor(unit) {
    return Object.prototype.hasOwnProperty.call(UNITS, unit || "") ? fmt[unit === "" || unit == null ? "num" : unit] : fmt.num;
  }

  // Fewest decimals (0..6) that show x exactly enough.
  function decimalsFor(x) {
    x = Math.abs(x);
    if (!(x > 0) || !Number.isFinite(x)) return 0;
    for (let d = 0; d <= 6; d++) {
      const s = x * Math.pow(10, d);
      if (Math.abs(Math.round(s) - s) < 1e-6 * Math.max(1, s)) return d;
    }
    return 6;
  }

  // uPlot axis `values` for a linear axis: one prefix for every tick (chosen
  // by the largest tick), decimals from the tick increment, so adjacent ticks
  // never print the same. Log axes format each tick on its own.
  function tickValues(unit, withUnit) {
    const names = UNITS[unit] || UNITS[""];
    const one = fmtFor(unit);
    return function (u, splits, axisIdx, space, incr) {
      const sc = u.scales[u.axes[axisIdx].scale];
      if (sc && sc.distr === 3) return splits.map((v) => (v == null ? null : one(v)));
      let m = 0;
      for (const s of splits) if (s != null && Math.abs(s) > m) m = Math.abs(s);
      const i = prefixIndex(unit, m);
      const div = Math.pow(1000, i);
      const dec = decimalsFor(incr / div);
      const suffix = withUnit && names[i] ? " " + names[i] : "";
      return splits.map((v) => (v == null ? null : (v === 0 ? "0" : (v / div).toFixed(dec)) + suffix));
    };
  }

  // ------------------------------------------------------------- DOM helpers

  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }

  function baseFontPx(el) {
    const v = parseFloat(getComputedStyle(el).fontSize);
    return Number.isFinite(v) && v > 0 ? v : 16;
  }

  function slug(s) {
    return (
      String(s || "chart")
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-+|-+$/g, "") || "chart"
    );
  }

  let measureCtx = null;
  function measure(font, text) {
    measureCtx = measureCtx || document.createElement("canvas").getContext("2d");
    measureCtx.font = font;
    return measureCtx.measureText(text).width;
  }

  // uPlot axis `size` that fits the widest tick label.
  function axisSize(u, values, axisIdx, cycle) {
    const axis = u.axes[axisIdx];
    if (cycle > 1 && axis._size) return axis._size;
    let longest = "";
    for (const v of values || []) if (v != null && String(v).length > longest.length) longest = String(v);
    let sz = (axis.ticks && axis.ticks.show !== false ? axis.ticks.size : 0) + (axis.gap || 0);
    if (longest) sz += measure(axis.font[0], longest) / pxr();
    return Math.max(40, Math.ceil(sz) + 2);
  }

  function axisStyle(fontPx) {
    const f = Math.round(fontPx * 0.8);
    return {
      stroke: AXIS_STROKE,
      font: f + "px " + FONT_FAMILY,
      labelFont: "600 " + f + "px " + FONT_FAMILY,
      grid: { stroke: GRID_STROKE, width: 1 },
      ticks: { stroke: GRID_STROKE, width: 1, size: 6 },
    };
  }

  // Legend rows are keyboard-reachable toggles: tabindex=0, role=button,
  // aria-pressed mirrors visibility, Enter/Space clicks uPlot's own handler.
  function legendA11y(u) {
    if (!u || !u.root) return;
    const rows = u.root.querySelectorAll(".u-legend tr.u-series");
    const off = rows.length - (u.series.length - 1); // 1 when the x row is shown
    for (let i = 1; i < u.series.length; i++) {
      const tr = rows[i - 1 + off];
      if (!tr) continue;
      const s = u.series[i];
      const label = typeof s.label === "string" ? s.label : tr.textContent.trim();
      tr.tabIndex = 0;
      tr.setAttribute("role", "button");
      tr.setAttribute("aria-pressed", s.show ? "true" : "false");
      tr.setAttribute("aria-label", label + (s.show ? " (shown; press to hide)" : " (hidden; press to show)"));
    }
  }

  function wireLegendKeys(u) {
    const legend = u.root.querySelector(".u-legend");
    if (!legend || legend.dataset.ccKeys) return;
    legend.dataset.ccKeys = "1";
    legend.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" && e.key !== " " && e.key !== "Spacebar") return;
      const tr = e.target.closest && e.target.closest("tr.u-series");
      if (!tr || tr.tabIndex !== 0) return;
      e.preventDefault();
      const th = tr.querySelector("th");
      if (th) th.click();
    });
  }

  // ---------------------------------------------------------------- PNG

  // Title, the uPlot canvas (axes, series, markers) and a legend, on white.
  function renderPng(u, title, fontPx) {
    const src = u.ctx.canvas;
    const r = pxr();
    const f = (fontPx || 16) / 16;
    const W = src.width;
    const pad = Math.round(10 * r);
    const titleFont = "600 " + Math.round(16 * f * r) + "px " + FONT_FAMILY;
    const legendFont = Math.round(13 * f * r) + "px " + FONT_FAMILY;
    const titleH = title ? Math.round(30 * f * r) : 0;
    const lineH = Math.round(20 * f * r);
    const sw = Math.round(26 * r);

    // Lay the legend out first to know the height.
    const items = [];
    for (let i = 1; i < u.series.length; i++) {
      const s = u.series[i];
      const label = typeof s.label === "string" ? s.label : "";
      const w = sw + 6 * r + measure(legendFont, label) + 18 * r;
      items.push({ s, i, label, w });
    }
    let x = pad;
    let rows = items.length ? 1 : 0;
    for (const it of items) {
      if (x + it.w > W - pad && x > pad) {
        rows++;
        x = pad;
      }
      it.row = rows - 1;
      it.x = x;
      x += it.w;
    }
    const legendH = rows ? rows * lineH + pad : 0;

    const out = document.createElement("canvas");
    out.width = W;
    out.height = titleH + src.height + legendH;
    const ctx = out.getContext("2d");
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, out.width, out.height);
    if (title) {
      ctx.fillStyle = "#111";
      ctx.font = titleFont;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText(title, W / 2, titleH / 2 + 2 * r);
    }
    ctx.drawImage(src, 0, titleH);
    ctx.font = legendFont;
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    const y0 = titleH + src.height + Math.round(pad / 2);
    for (const it of items) {
      const y = y0 + it.row * lineH + lineH / 2;
      const s = it.s;
      ctx.globalAlpha = s.show ? 1 : 0.35;
      const stroke = typeof s.stroke === "function" ? s.stroke(u, it.i) : s.stroke;
      ctx.strokeStyle = stroke || "#000";
      ctx.lineWidth = Math.max(1, (s.width || 1) * r);
      ctx.setLineDash(s.dash || []);
      ctx.beginPath();
      ctx.moveTo(it.x, y);
      ctx.lineTo(it.x + sw, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = "#111";
      ctx.fillText(it.label, it.x + sw + 6 * r, y);
    }
    ctx.globalAlpha = 1;
    return out;
  }

  function downloadPng(u, title, filename, fontPx) {
    const canvas = renderPng(u, title, fontPx);
    const name = filename || slug(title) + ".png";
    return new Promise((resolve, reject) => {
      canvas.toBlob((blob) => {
        if (!blob) {
          reject(new Error("CCCharts: PNG encoding failed"));
          return;
        }
        const url = URL.createObjectURL(blob);
        const a = h("a", { href: url, download: name, style: "display:none" });
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 2000);
        resolve(blob);
      }, "image/png");
    });
  }

  function needUPlot() {
    if (typeof window.uPlot !== "function") throw new Error("CCCharts: uPlot is not loaded (static/vendor/uplot/uPlot.iife.min.js)");
    return window.uPlot;
  }

  // Calls cb(width, fontPx) when the plot host's width or the container's
  // font size changes (the "large text" toggle resizes the toolbar, which
  // resizes the container, which is observed too).
  function observeSize(el, host, fontPx, cb) {
    if (typeof ResizeObserver !== "function") return null;
    let lastW = Math.floor(host.clientWidth);
    let lastF = fontPx;
    const ro = new ResizeObserver(() => {
      const w = Math.floor(host.clientWidth);
      const f = baseFontPx(el);
      if (w > 0 && (w !== lastW || f !== lastF)) {
        lastW = w;
        lastF = f;
        cb(w, f);
      }
    });
    ro.observe(host);
    ro.observe(el);
    return ro;
  }

  // Re-size an existing chart's axis fonts (uPlot keeps [font, px, cssPx]).
  function setAxisFonts(u, fontPx) {
    const css = Math.round(fontPx * 0.8);
    const dev = Math.round(css * pxr() * 10) / 10;
    for (const a of u.axes) {
      for (const f of [a.font, a.labelFont]) {
        if (!Array.isArray(f)) continue;
        f[0] = f[0].replace(/[0-9.]+px/, dev + "px");
        f[1] = dev;
        f[2] = css;
      }
      if (a.label != null) a.labelSize = Math.round(fontPx * 1.3);
    }
  }

  // Binary search: first index i with a[i] >= v.
  function lowerBound(a, v) {
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // uPlot's own gap finder assumes every series has a value at every x. Here
  // a series is `undefined` where it has no point, so an explicit null gap
  // runs from this series' previous real point to its next one.
  function alignedGaps(u, si, idx0, idx1, nullGaps) {
    if (!nullGaps || !nullGaps.length) return nullGaps;
    const xs = u.data[0];
    const ys = u.data[si];
    const left = u.bbox.left;
    const right = u.bbox.left + u.bbox.width;
    const px = (x) => Math.round(u.valToPos(x, "x", true));
    const out = [];
    let lastNum = -1;
    let i = idx0;
    while (i <= idx1) {
      const v = ys[i];
      if (v === null) {
        let j = i + 1;
        while (j <= idx1 && ys[j] == null) j++;
        const fr = lastNum >= 0 ? px(xs[lastNum]) : left;
        const to = j <= idx1 ? px(xs[j]) : right;
        if (to > fr) out.push([fr, to]);
        i = j;
        continue;
      }
      if (v != null) lastNum = i;
      i++;
    }
    return out;
  }

  // ------------------------------------------------------------- timeChart

  const WINDOWS = [
    [0, "All"],
    [100e3, "100 µs"],
    [1e6, "1 ms"],
    [10e6, "10 ms"],
  ];

  function timeChart(el, opts) {
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

    function ensureSeries(key, label) {
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
      const d = dash(i);
      u.addSeries({
        label: text,
        stroke: color(i),
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

  // Shared shell: toolbar with a PNG button, a host, resize, rebuild on set().
  function staticShell(el, o, build) {
    const uPlot = needUPlot();
    el.classList.add("chart");
    const title = o.title || "";
    const host = h("div", { class: "chart-plot" });
    let u = null;
    let lastList = [];
    const pngBtn = h("button", { type: "button", class: "btn small chart-png", title: "Download this chart as a PNG image" }, "PNG");
    if (o.toolbar !== false) el.append(h("div", { class: "toolbar chart-toolbar", role: "toolbar", "aria-label": (title || "Chart") + " controls" }, pngBtn));
    el.append(host);
    let fontPx = baseFontPx(el);
    const height = Math.max(120, Number(o.height) || 260);

    function width() {
      return Math.max(240, Math.floor(host.clientWidth || el.clientWidth || 640));
    }

    function set(list) {
      lastList = Array.isArray(list) ? list : [];
      const { opts, data } = build(lastList, fontPx);
      opts.width = width();
      opts.height = height;
      opts.title = title || undefined;
      opts.hooks = Object.assign({}, opts.hooks, {
        setSeries: [(uu) => legendA11y(uu)],
        ready: [(uu) => { legendA11y(uu); wireLegendKeys(uu); }],
      });
      if (u) u.destroy();
      u = new uPlot(opts, data, host);
      let n = 0;
      for (let s = 1; s < data.length; s++) for (const v of data[s]) if (v != null) n++;
      el.dataset.points = String(n);
    }

    const ro = observeSize(el, host, fontPx, (w, f) => {
      if (f !== fontPx) {
        fontPx = f;
        set(lastList);
      } else if (u && w !== u.width) u.setSize({ width: w, height });
    });
    pngBtn.addEventListener("click", () => api.png());

    const api = {
      el,
      set,
      get uplot() {
        return u;
      },
      png: (filename) => (u ? downloadPng(u, title, filename, fontPx) : Promise.reject(new Error("CCCharts: nothing to export"))),
      destroy() {
        if (ro) ro.disconnect();
        if (u) u.destroy();
        u = null;
        el.replaceChildren();
      },
    };
    set([]);
    return api;
  }

  // Merge per-entry [x, y] lists onto one sorted x array (undefined where an
  // entry has no point, which uPlot spans over).
  function alignXY(lists) {
    const all = [];
    for (const pts of lists) for (const p of pts) all.push(p[0]);
    all.sort((a, b) => a - b);
    const xs = [];
    for (const x of all) if (!xs.length || xs[xs.length - 1] !== x) xs.push(x);
    const ys = lists.map((pts) => {
      const y = new Array(xs.length).fill(undefined);
      for (const [x, v] of pts) y[lowerBound(xs, x)] = v;
      return y;
    });
    return [xs, ...ys];
  }

  function cdfChart(el, opts) {
    const o = Object.assign({ title: "", xUnit: "", height: 260, logX: false, xLabel: null }, opts || {});
    const xUnit = Object.prototype.hasOwnProperty.call(UNITS, o.xUnit || "") ? o.xUnit || "" : "";
    const fmtX = fmtFor(xUnit);
    return staticShell(el, o, (list, fontPx) => {
      const style = axisStyle(fontPx);
      const lists = list.map((e) =>
        (e.points || [])
          .map((p) => [Number(p[0]), p[1] == null ? null : Number(p[1])])
          .filter((p) => Number.isFinite(p[0]) && (!o.logX || p[0] > 0)),
      );
      const data = alignXY(lists);
      const series = [{ label: "x", value: (u, v) => (v == null ? "—" : fmtX(v)) }];
      list.forEach((e, i) => {
        const d = dash(i);
        series.push({
          label: e.label == null ? "series " + (i + 1) : String(e.label),
          stroke: color(i),
          width: 2,
          dash: scaledDash(d),
          _ccDash: d,
          gaps: alignedGaps,
          value: (u, v) => (v == null ? "—" : v.toFixed(3)),
        });
      });
      const opts = {
        scales: {
          x: o.logX
            ? { time: false, distr: 3, log: 10 }
            : { time: false, range: (u, min, max) => (min == null ? [0, 1] : min === max ? [min - 1, max + 1] : [min, max]) },
          y: { range: () => [0, 1] },
        },
        series,
        axes: [
          Object.assign({}, style, {
            values: tickValues(xUnit, true),
            label: o.xLabel || undefined,
            labelSize: o.xLabel ? Math.round(fontPx * 1.3) : undefined,
          }),
          Object.assign({}, style, {
            values: (u, splits) => splits.map((v) => (v == null ? null : String(Number(v.toFixed(2))))),
            label: "fraction ≤ x",
            labelSize: Math.round(fontPx * 1.3),
          }),
        ],
        cursor: { drag: { x: true, y: false, setScale: true } },
        legend: { live: true, markers: { dash: (u, i) => borderStyle(u.series[i]._ccDash) } },
      };
      return { opts, data };
    });
  }

  const SIZE_BUCKETS = Object.freeze(["<10K", "10K-100K", "100K-1M", "1M-10M", ">=10M"]);
  const PCTS = [
    { key: "p50", dash: [], size: 8, hollow: false, width: 2 },
    { key: "p95", dash: [7, 4], size: 8, hollow: true, width: 1.75 },
    { key: "p99", dash: [2, 3], size: 6, hollow: false, width: 1.75 },
  ];

  function sizeChart(el, opts) {
    const o = Object.assign({ title: "", height: 300 }, opts || {});
    const uPlot = needUPlot();
    return staticShell(el, o, (list, fontPx) => {
      const style = axisStyle(fontPx);
      const xs = SIZE_BUCKETS.map((_, i) => i);
      const data = [xs];
      const series = [{ label: "flow size", value: (u, v) => (v == null ? "—" : SIZE_BUCKETS[v] || "") }];
      list.forEach((e, ei) => {
        const c = color(ei);
        for (const p of PCTS) {
          const src = Array.isArray(e[p.key]) ? e[p.key] : [];
          data.push(
            xs.map((i) => {
              const v = src[i];
              if (v == null) return null;
              const n = Number(v);
              return Number.isFinite(n) && n > 0 ? n : null;
            }),
          );
          series.push({
            label: (e.label == null ? "entry " + (ei + 1) : String(e.label)) + " " + p.key,
            stroke: c,
            width: p.width,
            dash: scaledDash(p.dash),
            _ccDash: p.dash,
            points: { show: true, size: p.size, width: 1.5, stroke: c, fill: p.hollow ? "#ffffff" : c },
            value: (u, v) => (v == null ? "—" : fmt.num(v) + "×"),
          });
        }
      });
      const opts = {
        scales: {
          x: { time: false, range: () => [-0.5, SIZE_BUCKETS.length - 0.5] },
          y: {
            distr: 3,
            log: 10,
            range: (u, min, max) => {
              if (min == null || max == null || !(min > 0)) return [1, 10];
              const r = uPlot.rangeLog(Math.min(min, 1), Math.max(max, 1), 10, true);
              return [Math.max(r[0], 0.1), r[1]];
            },
          },
        },
        series,
        axes: [
          Object.assign({}, style, {
            splits: () => xs.slice(),
            values: (u, splits) => splits.map((v) => (v == null ? null : SIZE_BUCKETS[v] || "")),
            label: "flow size (bytes)",
            labelSize: Math.round(fontPx * 1.3),
          }),
          Object.assign({}, style, {
            values: (u, splits) => splits.map((v) => (v == null ? null : fmt.num(v))),
            size: axisSize,
            label: "FCT slowdown",
            labelSize: Math.round(fontPx * 1.3),
          }),
        ],
        cursor: { drag: { x: false, y: false } },
        legend: { live: true, markers: { dash: (u, i) => borderStyle(u.series[i]._ccDash) } },
      };
      return { opts, data };
    });
  }

  // ------------------------------------------------------------- running

  // Bounded uniform reservoir (Algorithm R). running([v...]) seeds it;
  // running(n) with a number sets the capacity (default 4096).
  function running(values, capacity) {
    let cap = 4096;
    if (typeof values === "number") {
      cap = values;
      values = null;
    } else if (typeof capacity === "number") cap = capacity;
    cap = Math.max(1, Math.floor(cap) || 4096);
    const buf = [];
    let n = 0;
    let sorted = null;
    function add(v) {
      v = Number(v);
      if (!Number.isFinite(v)) return;
      n++;
      if (buf.length < cap) buf.push(v);
      else {
        const j = Math.floor(Math.random() * n);
        if (j < cap) buf[j] = v;
      }
      sorted = null;
    }
    function quantile(q) {
      if (!buf.length) return null;
      if (!sorted) sorted = buf.slice().sort((a, b) => a - b);
      const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
      return sorted[k];
    }
    if (values && typeof values[Symbol.iterator] === "function") for (const v of values) add(v);
    return {
      add,
      p50: () => quantile(0.5),
      p99: () => quantile(0.99),
      quantile,
      count: () => n,
      clear() {
        buf.length = 0;
        n = 0;
        sorted = null;
      },
    };
  }

  window.CCCharts = Object.freeze({
    version: "1",
    palette,
    color,
    dash,
    fmt,
    sizeBuckets: SIZE_BUCKETS,
    timeChart,
    cdfChart,
    sizeChart,
    running,
  });
})();
