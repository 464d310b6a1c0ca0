// charts/xy.js: set-once line charts of y against x (Bode plots, sweeps,
// fluid trajectories), one line per entry: { label, points: [[x, y], …] }.
// A line with two points spanning the x range draws a reference level.

import { borderStyle, color, dash, scaledDash } from "./style.js";
import { axisStyle } from "./dom.js";
import { sig3 } from "./format.js";
import { alignXY, alignedGaps } from "./shape.js";
import { staticShell } from "./static.js";

export function xyChart(el, opts) {
  const o = Object.assign({ title: "", height: 240, logX: false, xLabel: "", yLabel: "" }, opts || {});
  return staticShell(el, o, (list, fontPx) => {
    const style = axisStyle(fontPx);
    const lists = list.map((e) =>
      (e.points || [])
        .map((p) => [Number(p[0]), p[1] == null ? null : Number(p[1])])
        .filter((p) => Number.isFinite(p[0]) && (!o.logX || p[0] > 0) && (p[1] === null || Number.isFinite(p[1]))),
    );
    const data = alignXY(lists);
    const series = [{ label: o.xLabel || "x", value: (u, v) => (v == null ? "—" : sig3(v)) }];
    list.forEach((e, i) => {
      const d = e.dash || dash(i);
      series.push({
        label: e.label == null ? "series " + (i + 1) : String(e.label),
        stroke: e.color || color(i),
        width: e.width || 2,
        dash: scaledDash(d),
        _ccDash: d,
        spanGaps: true,
        gaps: alignedGaps,
        value: (u, v) => (v == null ? "—" : sig3(v)),
      });
    });
    const ticks = (u, splits) => splits.map((v) => (v == null ? null : sig3(v)));
    return {
      data,
      opts: {
        scales: {
          x: o.logX ? { time: false, distr: 3, log: 10 } : { time: false },
          y: { range: (u, min, max) => (min == null ? [0, 1] : min === max ? [min - 1, max + 1] : [min, max]) },
        },
        series,
        axes: [
          Object.assign({}, style, { values: ticks, label: o.xLabel || undefined, labelSize: o.xLabel ? Math.round(fontPx * 1.3) : undefined }),
          Object.assign({}, style, { values: ticks, label: o.yLabel || undefined, labelSize: o.yLabel ? Math.round(fontPx * 1.3) : undefined }),
        ],
        cursor: { drag: { x: true, y: false, setScale: true } },
        legend: { live: true, markers: { dash: (u, i) => borderStyle(u.series[i]._ccDash) } },
      },
    };
  });
}
