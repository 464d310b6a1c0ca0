// charts/cdf.js: CDFs, one line per entry.

import { borderStyle, color, dash, scaledDash } from "./style.js";
import { UNITS, fmtFor, tickValues } from "./format.js";
import { axisStyle } from "./dom.js";
import { alignXY, alignedGaps } from "./shape.js";
import { staticShell } from "./static.js";

export function cdfChart(el, opts) {
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
