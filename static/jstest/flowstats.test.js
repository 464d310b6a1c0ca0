// Flow statistics (static/js/charts/flowstats.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  aggregate, averageWindow, bucketOf, bytesOf, cdfPoints, convergence, movingAverage, niceCeil,
  slowdownCdfs, topFlows, trailingMean,
} from "../js/charts/flowstats.js";

test("niceCeil rounds up to 1, 2 or 5 × 10^k", () => {
  for (const [x, want] of [[1, 1], [1.1, 2], [3, 5], [7, 10], [10, 10], [12, 20], [0.03, 0.05], [0, 0]]) assert.equal(niceCeil(x), want, `x=${x}`);
  assert.equal(averageWindow(1000), 10000); // 10 points of 1 µs: 10 µs
  assert.equal(averageWindow(1500), 20000);
});

test("movingAverage is the trailing mean over the window, and smooths on/off samples", () => {
  const t = [0, 1, 2, 3, 4, 5, 6, 7];
  const v = [8, 0, 0, 0, 8, 0, 0, 0]; // one packet every 4 intervals
  const avg = movingAverage(t, v, 4);
  for (let i = 0; i < t.length; i++) assert.equal(avg[i], trailingMean(t, v, i, 4), `i=${i}`);
  assert.deepEqual(avg.slice(3), [2, 2, 2, 2, 2]);
  assert.equal(avg[0], 8); // a flow's first window averages only its own points
});

test("movingAverage keeps gaps and skips nulls inside the window", () => {
  assert.deepEqual(movingAverage([0, 1, 2], [4, null, 2], 10), [4, null, 3]);
  assert.deepEqual(movingAverage([], [], 5), []);
});

test("the last point of a flow is averaged over its window, never above the link", () => {
  // 1 Gbps link, a packet each 8 samples: raw samples 0 or 8 Gbps
  const t = [], v = [];
  for (let i = 0; i < 40; i++) { t.push(i * 1000); v.push(i % 8 === 7 ? 8e9 : 0); }
  const avg = movingAverage(t, v, averageWindow(1000) * 0.8); // 8 points
  assert.ok(avg.slice(8).every((x) => x <= 1e9 + 1e-3), avg.slice(8).join(","));
});

test("aggregate sums throughput, counts active flows and the busiest receiver's utilisation", () => {
  const flows = [
    { t: [0, 10, 20], v: [1e9, 1e9, null], dst: "h0" },
    { t: [10, 20], v: [3e9, 5e9], dst: "h0" },
    { t: [20], v: [2e9], dst: "h1" },
  ];
  const a = aggregate(flows, { h0: 10e9, h1: 4e9 });
  assert.deepEqual(a.map((x) => x.t), [0, 10, 20]);
  assert.deepEqual(a.map((x) => x.total), [1e9, 4e9, 7e9]);
  assert.deepEqual(a.map((x) => x.active), [1, 2, 2]);
  assert.deepEqual(a.map((x) => x.util), [0.1, 0.4, 0.5]);
  assert.equal(aggregate(flows, null)[0].util, null);
});

test("topFlows picks the most bytes, ties by id", () => {
  assert.deepEqual(topFlows(new Map([["0", 5], ["1", 9], ["2", 5], ["3", 1]]), 3), ["1", "0", "2"]);
  assert.deepEqual(topFlows({ 7: 1 }, 0), []);
  assert.equal(bytesOf([0, 1e9, 2e9], [0, 8e9, 8e9]), 2e9); // 8 Gbps for 2 s
});

test("cdfPoints and slowdown CDFs per size bucket", () => {
  assert.deepEqual(cdfPoints([3, 1, 2, 2]), [[1, 0.25], [2, 0.75], [3, 1]]);
  const buckets = [{ lo_bytes: 0, label: "small" }, { lo_bytes: 100, label: "big" }, { lo_bytes: 1000, label: "huge" }];
  assert.equal(bucketOf(99, buckets), 0);
  assert.equal(bucketOf(100, buckets), 1);
  const c = slowdownCdfs([{ size: 10, slowdown: 2 }, { size: 500, slowdown: 1 }, { size: 50, slowdown: 4 }], buckets);
  assert.deepEqual(c.map((x) => x.label), ["all flows (3)", "small (2)", "big (1)"]);
  assert.deepEqual(c[1].points, [[2, 0.5], [4, 1]]);
});

test("convergence is the first time a flow stays within 10% of its fair share for the hold window", () => {
  const t = [], a = [], b = [];
  for (let i = 0; i < 40; i++) t.push(i);
  for (let i = 0; i < 40; i++) a.push(i < 20 ? 10 : 5); // alone, then sharing with b
  for (let i = 20; i < 40; i++) b.push(i < 25 ? 1 : i === 30 ? 8 : 5.2);
  const r = convergence([
    { key: "0", dst: "h", t, v: a },
    { key: "1", dst: "h", t: t.slice(20), v: b },
  ], { h: 10 }, 0.1, 3);
  assert.deepEqual(r[0], { key: "0", start: 0, at: 0, time: 0 });
  // b is at 1 then 5.2 from 25, a spike at 30: it has held 3 points by 27
  assert.deepEqual(r[1], { key: "1", start: 20, at: 25, time: 5 });
  const never = convergence([{ key: "2", dst: "h", t: [0, 1], v: [1, 1] }], { h: 10 }, 0.1, 3);
  assert.equal(never[0].time, null);
});

test("findPods: the groups left when the top tier is taken out", async () => {
  const { findPods, portEnds } = await import("../js/topozoom.js");
  assert.deepEqual(portEnds("t0->h1#2"), ["t0", "h1"]);
  // two pods of one ToR and two hosts each, under one core
  const nodes = { c0: { y: 0 }, t0: { y: 1 }, t1: { y: 1 }, h0: { y: 2, host: true }, h1: { y: 2, host: true }, h2: { y: 2, host: true }, h3: { y: 2, host: true } };
  const links = [["c0", "t0"], ["c0", "t1"], ["t0", "h0"], ["t0", "h1"], ["t1", "h2"], ["t1", "h3"]];
  const pods = findPods(nodes, links).map((p) => p.sort());
  assert.deepEqual(pods.sort(), [["h0", "h1", "t0"], ["h2", "h3", "t1"]]);
  // a star (two tiers) has no pods
  assert.deepEqual(findPods({ s: { y: 0 }, h: { y: 1, host: true } }, [["s", "h"]]), []);
});
