// charts/dom.js: DOM helpers shared by the charts: elements, fonts, axes,
// accessible legends, PNG export, resize observation.

import { AXIS_STROKE, FONT_FAMILY, GRID_STROKE, pxr } from "./style.js";

export function h(tag, attrs, ...children) {
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

export function baseFontPx(el) {
  const v = parseFloat(getComputedStyle(el).fontSize);
  return Number.isFinite(v) && v > 0 ? v : 16;
}

export function slug(s) {
  return (
    String(s || "chart")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "") || "chart"
  );
}

export let measureCtx = null;
export function measure(font, text) {
  measureCtx = measureCtx || document.createElement("canvas").getContext("2d");
  measureCtx.font = font;
  return measureCtx.measureText(text).width;
}

// uPlot axis `size` that fits the widest tick label.
export function axisSize(u, values, axisIdx, cycle) {
  const axis = u.axes[axisIdx];
  if (cycle > 1 && axis._size) return axis._size;
  let longest = "";
  for (const v of values || []) if (v != null && String(v).length > longest.length) longest = String(v);
  let sz = (axis.ticks && axis.ticks.show !== false ? axis.ticks.size : 0) + (axis.gap || 0);
  if (longest) sz += measure(axis.font[0], longest) / pxr();
  return Math.max(40, Math.ceil(sz) + 2);
}

export function axisStyle(fontPx) {
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
export function legendA11y(u) {
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

export function wireLegendKeys(u) {
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
export function renderPng(u, title, fontPx) {
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

export function downloadPng(u, title, filename, fontPx) {
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

export function needUPlot() {
  if (typeof window.uPlot !== "function") throw new Error("CCCharts: uPlot is not loaded (static/vendor/uplot/uPlot.iife.min.js)");
  return window.uPlot;
}

// Calls cb(width, fontPx) when the plot host's width or the container's
// font size changes (the "large text" toggle resizes the toolbar, which
// resizes the container, which is observed too).
export function observeSize(el, host, fontPx, cb) {
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
export function setAxisFonts(u, fontPx) {
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
