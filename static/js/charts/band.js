// charts/band.js: one line of a mean against x with its confidence band
// (a parameter sweep's metric across one axis): markers at the means, the
// interval [lo, hi] shaded between two thin lines and drawn as a whisker
// at each point; x numeric (linear or
// log) or categorical (labels at 0..n-1). Clicking the plot picks the
// point nearest along x (opts.onPick(i), i indexing the data); set it as
// the entry's selected to ring it.
//
//   set([{ x, mean, lo, hi, labels?, categorical?, log?, selected? }])
//
// After every draw the element's data-points counts the markers drawn,
// data-markers gives their positions in the plot area ([[x, y], …], CSS
// px from its top left), data-band counts the x where the band is drawn
// (lo and hi known) and data-band-open those where it has a width.

import { color } from "./style.js";
import { UNITS, fmtFor, sig3, tickValues } from "./format.js";
import { axisSize, axisStyle, needUPlot } from "./dom.js";
import { staticShell } from "./static.js";

const BAND_FILL = "rgba(0, 114, 178, 0.18)";
const BAND_EDGE = "rgba(0, 114, 178, 0.55)";

// padRange widens [min, max] by a tenth on each side (a whole unit when
// they are equal), not below 0 for values that are all >= 0.
export function padRange(min, max) {
  if (min == null || max == null) return [0, 1];
  const span = max - min || Math.abs(max) || 1;
  let lo = min - span * 0.1;
  const hi = max + span * 0.1;
  if (min >= 0 && lo < 0) lo = 0;
  return [lo, hi];
}

// logPad widens a log axis' [min, max] by a twentieth of its decades on
// each side, so that the end markers are drawn whole.
export function logPad(min, max) {
  if (!(min > 0) || !(max > 0)) return [1, 10];
  const f = Math.pow(max / min, 0.05) || 1;
  return min === max ? [min / 2, max * 2] : [min / f, max * f];
}

export function bandChart(el, opts) {
  const o = Object.assign({ title: "", height: 300, xLabel: "x", yLabel: "", unit: "", onPick: null }, opts || {});
  const unit = Object.prototype.hasOwnProperty.call(UNITS, o.unit || "") ? o.unit || "" : "";
  const fmtY = fmtFor(unit);
  const uPlot = needUPlot();
  return staticShell(el, o, (list, fontPx) => {
    const style = axisStyle(fontPx);
    const e = list[0] || { x: [], mean: [], lo: [], hi: [] };
    const n = e.x.length;
    const label = (v) => (e.categorical ? (e.labels || [])[Math.round(v)] : sig3(v));
    const xScale = e.categorical
      ? { time: false, range: () => [-0.5, Math.max(n, 1) - 0.5] }
      : e.log
        ? { time: false, distr: 3, log: 10, range: (u, min, max) => logPad(min, max) }
        : { time: false, range: (u, min, max) => (min === max ? [min - (Math.abs(min) || 1) * 0.5, max + (Math.abs(max) || 1) * 0.5] : padRange(min, max)) };
    const yVal = (u, v) => (v == null ? "—" : fmtY(v));
    const c = color(0);
    const opts = {
      scales: { x: xScale, y: { range: (u, min, max) => padRange(min, max) } },
      series: [
        { label: o.xLabel, value: (u, v) => (v == null ? "—" : label(v)) },
        {
          label: (o.yLabel || "value") + " (mean)",
          stroke: c,
          width: 2,
          spanGaps: true,
          points: { show: true, size: 10, width: 2, stroke: c, fill: c },
          value: yVal,
        },
        { label: "95% interval, low", stroke: BAND_EDGE, width: 1, dash: [4, 3], spanGaps: true, points: { show: false }, value: yVal },
        { label: "95% interval, high", stroke: BAND_EDGE, width: 1, dash: [4, 3], spanGaps: true, points: { show: false }, value: yVal },
      ],
      bands: [{ series: [3, 2], fill: BAND_FILL }],
      axes: [
        Object.assign({}, style, {
          // ticks at the swept values themselves, unless there are many
          splits: e.categorical || n <= 12 ? () => e.x.slice() : undefined,
          values: e.categorical ? (u, splits) => splits.map((v) => (v == null ? null : label(v))) : (u, splits) => splits.map((v) => (v == null ? null : sig3(v))),
          label: o.xLabel,
          labelSize: Math.round(fontPx * 1.3),
        }),
        Object.assign({}, style, {
          values: tickValues(unit, true),
          size: axisSize,
          label: o.yLabel || undefined,
          labelSize: o.yLabel ? Math.round(fontPx * 1.3) : undefined,
        }),
      ],
      cursor: { drag: { x: false, y: false }, points: { size: 12 } },
      legend: { live: true },
      hooks: {
        init: [
          (u) => {
            u.over.style.cursor = "pointer";
            u.over.addEventListener("click", (ev) => {
              // the marker nearest the click along x
              const at = ev.clientX - u.over.getBoundingClientRect().left;
              let best = -1;
              for (let i = 0; i < n; i++) {
                if (e.mean[i] == null) continue;
                if (best < 0 || Math.abs(u.valToPos(e.x[i], "x") - at) < Math.abs(u.valToPos(e.x[best], "x") - at)) best = i;
              }
              if (best >= 0 && o.onPick) o.onPick(best);
            });
          },
        ],
        draw: [
          (u) => {
            const markers = [];
            let band = 0;
            let open = 0;
            for (let i = 0; i < n; i++) {
              if (e.mean[i] != null) markers.push([Math.round(u.valToPos(e.x[i], "x")), Math.round(u.valToPos(e.mean[i], "y"))]);
              if (e.lo[i] != null && e.hi[i] != null) {
                band++;
                if (e.hi[i] > e.lo[i]) open++;
              }
            }
            el.dataset.points = String(markers.length);
            el.dataset.markers = JSON.stringify(markers); // CSS px in the plot area (u.over)
            el.dataset.band = String(band);
            el.dataset.bandOpen = String(open);
            el.dataset.draws = String(Number(el.dataset.draws || 0) + 1);
            // each interval as a whisker too: a point alone (its
            // neighbours not yet run) has no band to show it
            const ctx = u.ctx;
            const pr = uPlot.pxRatio || 1;
            ctx.save();
            ctx.setLineDash([]);
            ctx.strokeStyle = BAND_EDGE;
            ctx.lineWidth = 1.5 * pr;
            for (let i = 0; i < n; i++) {
              if (e.lo[i] == null || e.hi[i] == null || !(e.hi[i] > e.lo[i])) continue;
              const px = u.valToPos(e.x[i], "x", true);
              const y0 = u.valToPos(e.lo[i], "y", true);
              const y1 = u.valToPos(e.hi[i], "y", true);
              const w = 5 * pr;
              ctx.beginPath();
              ctx.moveTo(px, y0);
              ctx.lineTo(px, y1);
              ctx.moveTo(px - w, y0);
              ctx.lineTo(px + w, y0);
              ctx.moveTo(px - w, y1);
              ctx.lineTo(px + w, y1);
              ctx.stroke();
            }
            ctx.restore();
            const s = e.selected;
            if (s == null || s < 0 || s >= n || e.mean[s] == null) return;
            // a ring around the picked point
            const px = u.valToPos(e.x[s], "x", true);
            const py = u.valToPos(e.mean[s], "y", true);
            const r = 9 * pr;
            ctx.save();
            ctx.setLineDash([]);
            ctx.strokeStyle = "#d55e00";
            ctx.lineWidth = 3 * pr;
            ctx.beginPath();
            ctx.arc(px, py, r, 0, 2 * Math.PI);
            ctx.stroke();
            ctx.restore();
          },
        ],
      },
    };
    return { opts, data: [e.x.slice(), e.mean.slice(), e.lo.slice(), e.hi.slice()] };
  });
}
