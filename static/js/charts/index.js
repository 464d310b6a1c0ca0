// charts/index.js: the lab's small chart library over uPlot (the vendored
// IIFE build, static/vendor/uplot, loaded before the modules). Every page
// imports what it needs from here:
//
//   palette, color(i), dash(i)   colour-blind-safe series styling
//   fmt.bytes / bps / ns / num   value formatters
//   timeChart(el, opts)          live multi-series chart of simulated time
//   cdfChart(el, opts)           CDFs, one line per entry
//   sizeChart(el, opts)          FCT slowdown by flow-size bucket (p50/p95/p99)
//   xyChart(el, opts)            set-once lines of y against x (log x optional)
//   bandChart(el, opts)          a mean against x with its confidence band (sweeps)
//   running(values)              bounded reservoir with p50/p99
//
// Simulated times are integers or floats in nanoseconds throughout.

export { palette, color, dash } from "./style.js";
export { fmt, fmtFor, unitOf } from "./format.js";
export { timeChart } from "./time.js";
export { cdfChart } from "./cdf.js";
export { sizeChart } from "./size.js";
export { running } from "./running.js";
export { xyChart } from "./xy.js";
export { bandChart } from "./band.js";
