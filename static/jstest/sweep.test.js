// The sweep panel's parsing (static/js/sweep-grid.js) and the sweep page's
// shaping and colours (static/js/sweep-view.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { axisOfField, goFloat, gridArg, parseSeeds, parseValues, roundDrift, runCount } from "../js/sweep-grid.js";
import { gradient, heatColor, heatData, lineData, logScale, luminance, metricFormat, metricUnit, numericValues, pointLabel, progressText, scaleOf, textOn, unchangedAxes, unchangedText } from "../js/sweep-view.js";
import { logPad, padRange } from "../js/charts/band.js";

test("goFloat writes numbers as Go's FormatFloat 'g' -1", () => {
  const cases = [[0, "0"], [1, "1"], [0.3, "0.3"], [100000, "100000"], [1e6, "1e+06"], [1234567, "1.234567e+06"],
    [0.0001, "0.0001"], [0.00001, "1e-05"], [2.5e-5, "2.5e-05"], [-3, "-3"], [1e21, "1e+21"], [1e-7, "1e-07"]];
  for (const [v, want] of cases) assert.equal(goFloat(v), want, String(v));
});

test("roundDrift takes float drift away at any scale", () => {
  assert.equal(roundDrift(0.1 + 2 * 0.1, 0.1), 0.3);
  assert.equal(roundDrift(1e-9 + 2e-9, 1e-9), 3e-9);
  assert.equal(roundDrift(0, 0.1), 0);
  assert.equal(roundDrift(1e-12, 0.1), 0); // drift around 0
});

test("parseValues reads lists as written and ranges as the server expands them", () => {
  assert.deepEqual(parseValues("1,10,100"), { values: ["1", "10", "100"] });
  assert.deepEqual(parseValues(" 40Gbps , 100Gbps"), { values: ["40Gbps", "100Gbps"] });
  assert.deepEqual(parseValues("7"), { values: ["7"] });
  assert.deepEqual(parseValues("0.3:0.7:0.2"), { values: ["0.3", "0.5", "0.7"] });
  assert.deepEqual(parseValues("0.1:0.3:0.1"), { values: ["0.1", "0.2", "0.3"] });
  assert.deepEqual(parseValues("1:2:0.4"), { values: ["1", "1.4", "1.8"] }); // hi not reached
  assert.deepEqual(parseValues("0:1000000:500000"), { values: ["0", "500000", "1e+06"] });
  assert.equal(parseValues("1:100:1").values.length, 100);
  for (const bad of ["", "  ", "1,,2", "1,1", "1:2", "a:2:1", "1:2:0", "1:2:-1", "3:1:1", "1:1000:1", "1:2:x", "1:Infinity:1"]) {
    assert.ok(parseValues(bad).error, "no error for " + JSON.stringify(bad));
  }
  assert.match(parseValues("1:2:0").error, /step/);
  assert.match(parseValues("1,,2").error, /value 2 is empty/);
  assert.equal(parseValues(Array.from({ length: 101 }, (_, i) => i).join(",")).error, "101 values, at most 100");
});

test("parseSeeds reads ranges, lists and mixes", () => {
  assert.deepEqual(parseSeeds("1-3"), { seeds: [1, 2, 3] });
  assert.deepEqual(parseSeeds("4"), { seeds: [4] });
  assert.deepEqual(parseSeeds("1-3, 9"), { seeds: [1, 2, 3, 9] });
  assert.deepEqual(parseSeeds("7,3"), { seeds: [7, 3] });
  for (const bad of ["", "0", "1-", "-1", "3-1", "1,1", "1-2,2", "x", "1.5", "1-200", "1-2-3"]) {
    assert.ok(parseSeeds(bad).error, "no error for " + JSON.stringify(bad));
  }
  assert.match(parseSeeds("1-2,2").error, /given twice/);
});

test("runCount multiplies the grid by the seeds, and says what it does not know", () => {
  assert.deepEqual(runCount([3], 2), { points: 3, seeds: 2, runs: 6, text: "3 points × 2 seeds = 6 runs" });
  assert.equal(runCount([2, 2], 1).text, "4 points × 1 seed = 4 runs");
  assert.equal(runCount([1], 1).text, "1 point × 1 seed = 1 run");
  assert.equal(runCount([3, null], 2).text, "? points × 2 seeds = ? runs");
  assert.equal(runCount([3], null).text, "3 points × ? seeds = ? runs");
  assert.equal(runCount([], 2).runs, null);
});

test("gridArg and axisOfField", () => {
  assert.equal(gridArg(" cc.params.wr ", " 1,10 "), "cc.params.wr=1,10");
  const paths = ["cc.params.wr", "workload[0].load"];
  assert.equal(axisOfField("grid[1]", paths), 1);
  assert.equal(axisOfField("axes[0].values", paths), 0);
  assert.equal(axisOfField("axes[1].path", paths), 1);
  assert.equal(axisOfField("cc.params.wr", paths), 0);
  assert.equal(axisOfField("scenario.workload[0].load", paths), 1);
  assert.equal(axisOfField("seeds", paths), -1);
  assert.equal(axisOfField("", paths), -1);
  assert.equal(axisOfField("cc.params.wrx", paths), -1);
});

test("metricFormat uses the API's units with the run pages' prefixes", () => {
  assert.equal(metricFormat("bytes")(13_600_000), "13.6 MB");
  assert.equal(metricFormat("bytes")(1500), "1.5 KB");
  assert.equal(metricFormat("µs")(147), "147 µs");
  assert.equal(metricFormat("µs")(1500), "1.5 ms");
  assert.equal(metricFormat("µs")(0.5), "500 ns");
  assert.equal(metricFormat("Gbps")(94.98), "95 Gbps");
  assert.equal(metricFormat("")(2.134), "2.13");
  assert.equal(metricFormat("")(12345), "12.3 k");
  assert.equal(metricFormat("µs")(null), "");
});

test("metricUnit charts µs as ns and Gbps as bps", () => {
  assert.deepEqual(metricUnit("µs"), { unit: "ns", mul: 1e3 });
  assert.deepEqual(metricUnit("Gbps"), { unit: "bps", mul: 1e9 });
  assert.deepEqual(metricUnit("bytes"), { unit: "bytes", mul: 1 });
  assert.deepEqual(metricUnit(""), { unit: "", mul: 1 });
  assert.deepEqual(metricUnit("furlongs"), { unit: "", mul: 1 });
});

test("the band chart's ranges leave room around the markers", () => {
  assert.deepEqual(padRange(10, 20), [9, 21]);
  assert.deepEqual(padRange(0.5, 10.5), [0, 11.5]); // values >= 0 stay above 0
  assert.deepEqual(padRange(-10, -5), [-10.5, -4.5]);
  assert.deepEqual(padRange(4, 4), [3.6, 4.4]);
  assert.deepEqual(padRange(0, 0), [0, 0.1]);
  assert.deepEqual(padRange(null, null), [0, 1]);
  const [lo, hi] = logPad(1, 100);
  assert.ok(lo < 1 && lo > 0.7 && hi > 100 && hi < 130, lo + " " + hi);
  assert.deepEqual(logPad(5, 5), [2.5, 10]);
  assert.deepEqual(logPad(0, 5), [1, 10]);
});

test("numericValues and logScale", () => {
  assert.deepEqual(numericValues(["1", "10", "1e2", ".5"]), [1, 10, 100, 0.5]);
  assert.equal(numericValues(["1", "40Gbps"]), null);
  assert.equal(numericValues([]), null);
  assert.equal(logScale([1, 10, 100]), true);
  assert.equal(logScale([1, 100]), false); // two points: linear
  assert.equal(logScale([0.3, 0.5, 0.7]), false);
  assert.equal(logScale([0, 10, 100]), false);
});

const stat = (mean, lo, hi, n) => ({ mean, lo, hi, n });

test("lineData sorts numeric values, keeps categories in order, leaves unfinished points empty", () => {
  const sw = {
    spec: { axes: [{ path: "cc.params.wr", values: ["100", "1", "10"] }], seeds: [1, 2] },
    points: [
      { index: 0, values: ["100"], metrics: { fct_p99: stat(3, 2, 4, 2) } },
      { index: 1, values: ["1"], metrics: { fct_p99: stat(1, 0.5, 1.5, 2) } },
      { index: 2, values: ["10"], metrics: {} },
    ],
  };
  const d = lineData(sw, "fct_p99");
  assert.deepEqual(d.x, [1, 10, 100]);
  assert.deepEqual(d.mean, [1, null, 3]);
  assert.deepEqual(d.lo, [0.5, null, 2]);
  assert.deepEqual(d.hi, [1.5, null, 4]);
  assert.deepEqual(d.index, [1, 2, 0]);
  assert.equal(d.categorical, false);
  assert.equal(d.log, true);
  const cat = lineData({ spec: { axes: [{ path: "switch.buffer", values: ["8MB", "32MB"] }] },
    points: [{ index: 0, values: ["8MB"], metrics: { m: stat(5, 5, 5, 1) } }, { index: 1, values: ["32MB"], metrics: {} }] }, "m");
  assert.equal(cat.categorical, true);
  assert.deepEqual(cat.x, [0, 1]);
  assert.deepEqual(cat.labels, ["8MB", "32MB"]);
  assert.deepEqual(cat.mean, [5, null]);
});

test("heatData lays points out by the two axes' values", () => {
  const sw = {
    spec: { axes: [{ path: "a", values: ["1", "2"] }, { path: "b", values: ["x", "y"] }] },
    points: [
      { index: 0, values: ["1", "x"], metrics: { m: stat(1, 1, 1, 1) } },
      { index: 1, values: ["1", "y"], metrics: { m: stat(4, 3, 5, 2) } },
      { index: 2, values: ["2", "x"], metrics: {} },
      { index: 3, values: ["2", "y"], metrics: { m: stat(2, 2, 2, 1) } },
    ],
  };
  const d = heatData(sw, "m");
  assert.deepEqual(d.rows, ["1", "2"]);
  assert.deepEqual(d.cols, ["x", "y"]);
  assert.equal(d.cells[0][1].mean, 4);
  assert.equal(d.cells[0][1].index, 1);
  assert.equal(d.cells[1][0].mean, null);
  assert.equal(d.cells[1][0].index, 2);
  assert.equal(d.min, 1);
  assert.equal(d.max, 4);
  assert.equal(heatData(sw, "other").min, null);
});

test("the colour scale runs dark to light, and its text always reads", () => {
  assert.equal(scaleOf(5, 0, 10), 0.5);
  assert.equal(scaleOf(3, 3, 3), 0.5);
  assert.equal(scaleOf(-1, 0, 10), 0);
  assert.equal(scaleOf(null, 0, 10), null);
  assert.equal(heatColor(0), "rgb(68, 1, 84)");
  assert.equal(heatColor(1), "rgb(253, 231, 37)");
  let last = -1;
  for (let t = 0; t <= 1.0001; t += 0.05) {
    const c = heatColor(t);
    const l = luminance(c);
    assert.ok(l > last, "lightness grows along the scale at " + t);
    last = l;
    const fg = textOn(t) === "#ffffff" ? 1 : 0;
    const contrast = (Math.max(l, fg) + 0.05) / (Math.min(l, fg) + 0.05);
    assert.ok(contrast >= 4.5, "text contrast " + contrast.toFixed(2) + " at " + t);
  }
  assert.match(gradient(), /^linear-gradient\(to right, rgb\(68, 1, 84\) 0%, .* rgb\(253, 231, 37\) 100%\)$/);
});

test("progressText and pointLabel", () => {
  assert.equal(progressText({ runsDone: 3, runsTotal: 8, runsFailed: 1, runsLive: 2, runsMissing: 0 }), "3 of 8 runs done, 1 failed, 2 live");
  assert.equal(progressText({ runsDone: 4, runsTotal: 4 }), "4 of 4 runs done");
  const sw = { spec: { axes: [{ path: "cc.params.wr" }, { path: "workload[0].load" }] } };
  assert.equal(pointLabel(sw, { values: ["10", "0.3"] }), "cc.params.wr = 10, workload[0].load = 0.3");
});

test("unchangedAxes finds the axes along which every result stayed the same, once every run is in", () => {
  const m = (v) => ({ fct_p99: stat(v, v, v, 2), drops: stat(0, 0, 0, 2) });
  const one = (means, extra) => Object.assign({
    status: "done",
    spec: { axes: [{ path: "cc.params.ai", values: ["5", "10", "20"] }], seeds: [1, 2] },
    points: means.map((v, i) => ({ index: i, values: [["5", "10", "20"][i]], done: 2, metrics: m(v) })),
  }, extra);
  assert.deepEqual(unchangedAxes(one([3, 3, 3])), ["cc.params.ai"]);
  assert.deepEqual(unchangedAxes(one([3, 3, 3.0000001])), []);
  assert.deepEqual(unchangedAxes(one([3, 3, 3], { status: "running" })), []); // not all in yet
  const partial = one([3, 3, 3]);
  partial.points[2].done = 1;
  assert.deepEqual(unchangedAxes(partial), []);
  const fewer = one([3, 3, 3]);
  delete fewer.points[1].metrics.drops; // a metric one point lacks is a difference
  assert.deepEqual(unchangedAxes(fewer), []);
  // two axes: hai changes the results, ai (along each hai) does not
  const two = { status: "done", spec: { axes: [{ path: "cc.params.ai", values: ["5", "10"] }, { path: "cc.params.hai", values: ["50", "200"] }], seeds: [1] }, points: [] };
  let i = 0;
  for (const ai of ["5", "10"]) for (const hai of ["50", "200"]) two.points.push({ index: i++, values: [ai, hai], done: 1, metrics: m(Number(hai)) });
  assert.deepEqual(unchangedAxes(two), ["cc.params.ai"]);
  assert.match(unchangedText(["cc.params.ai"]), /^cc\.params\.ai changed nothing in these runs: every value gave the same results/);
  assert.match(unchangedText(["a", "b"]), /^a and b changed nothing/);
  assert.equal(unchangedText([]), "");
});
