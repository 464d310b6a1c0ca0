// charts/size.js: FCT slowdown by flow-size bucket (p50/p95/p99).

import { borderStyle, color, dash, scaledDash } from "./style.js";
import { fmt } from "./format.js";
import { axisSize, axisStyle, needUPlot } from "./dom.js";
import { staticShell } from "./static.js";

export const PCTS = [
  { key: "p50", dash: [], size: 8, hollow: false, width: 2 },
  { key: "p95", dash: [7, 4], size: 8, hollow: true, width: 1.75 },
  { key: "p99", dash: [2, 3], size: 6, hollow: false, width: 1.75 },
];

// sizeChart's buckets are the labels of the server's size buckets (GET
// /api/vocabulary, sizeBuckets): the charts hold no copy of them.
export function sizeChart(el, opts) {
  const o = Object.assign({ title: "", height: 300, buckets: [] }, opts || {});
  const SIZE_BUCKETS = o.buckets;
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
