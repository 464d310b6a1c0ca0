// charts/style.js: colour-blind-safe series styling and the charts' fixed strokes.

export const FONT_FAMILY =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
export const AXIS_STROKE = "#1f2328";
export const GRID_STROKE = "rgba(0,0,0,0.09)";
export const MARKER_STROKE = "rgba(35,35,35,0.8)";

// ---------------------------------------------------------------- styling

// Okabe–Ito first, then Paul Tol's darker "muted"/"bright" picks that stay
// apart from them (wine, indigo, olive, brown) and a neutral grey.
export const palette = Object.freeze([
  "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
  "#882255", "#332288", "#999933", "#661100", "#888888",
]);

// After the palette wraps, lines change dash so they stay distinguishable
// without colour. Lengths are CSS pixels.
export const DASHES = [[], [10, 4], [2, 3], [10, 3, 2, 3], [5, 5]];

export function mod(i, n) {
  i = Math.floor(Number(i) || 0);
  return ((i % n) + n) % n;
}
export function color(i) {
  return palette[mod(i, palette.length)];
}
export function dash(i) {
  const k = Math.floor(Math.max(0, Math.floor(Number(i) || 0)) / palette.length);
  return DASHES[k % DASHES.length].slice();
}
// CSS border-style that best matches a dash pattern (legend markers).
export function borderStyle(d) {
  if (!d || d.length === 0) return "solid";
  return d[0] <= 3 ? "dotted" : "dashed";
}
export function pxr() {
  return (window.uPlot && window.uPlot.pxRatio) || window.devicePixelRatio || 1;
}
export function scaledDash(d) {
  const r = pxr();
  return (d || []).map((v) => v * r);
}
