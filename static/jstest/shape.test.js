// Data shaping (static/js/charts/shape.js, running.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { alignXY, alignedGaps, busiest, lowerBound } from "../js/charts/shape.js";
import { running } from "../js/charts/running.js";

test("lowerBound is the first index at or above v", () => {
  const a = [1, 3, 3, 7];
  for (const [v, want] of [[0, 0], [1, 0], [2, 1], [3, 1], [4, 3], [7, 3], [8, 4]]) assert.equal(lowerBound(a, v), want, `v=${v}`);
  assert.equal(lowerBound([], 5), 0);
});

test("alignXY merges per-entry points onto one sorted time axis", () => {
  assert.deepEqual(alignXY([]), [[]]);
  assert.deepEqual(alignXY([[[1, 10]]]), [[1], [10]]);
  assert.deepEqual(
    alignXY([
      [[2, 20], [1, 10]],
      [[3, 30], [1, 11]],
    ]),
    [[1, 2, 3], [10, 20, undefined], [11, undefined, 30]],
  );
});

test("alignedGaps spans a null from the series' previous real point to its next", () => {
  // x in pixels = x value × 10; the plot spans 0..100
  const u = { data: [[0, 1, 2, 3, 4], null], bbox: { left: 0, width: 100 }, valToPos: (x) => x * 10 };
  u.data[1] = [5, undefined, null, undefined, 6];
  assert.deepEqual(alignedGaps(u, 1, 0, 4, [[1, 2]]), [[0, 40]]);
  u.data[1] = [null, 5, 6, null, null];
  assert.deepEqual(alignedGaps(u, 1, 0, 4, [[1, 2]]), [[0, 10], [20, 100]]);
  assert.deepEqual(alignedGaps(u, 1, 0, 4, []), []); // uPlot found no gap: none
});

test("busiest picks the n largest maxima, sorted by name", () => {
  assert.deepEqual(busiest([], 6), []);
  assert.deepEqual(busiest([[5, "b"], [9, "a"], [5, "a2"], [1, "z"]], 2), ["a", "a2"]);
  assert.deepEqual(busiest([[1, "x"]], 6), ["x"]);
});

test("running keeps exact quantiles until its capacity", () => {
  const r = running();
  assert.equal(r.p50(), null);
  for (let v = 100; v >= 1; v--) r.add(v);
  r.add(NaN); // ignored
  r.add("x"); // ignored
  assert.equal(r.count(), 100);
  assert.equal(r.p50(), 50);
  assert.equal(r.p99(), 99);
  assert.equal(r.quantile(0), 1);
  assert.equal(r.quantile(1), 100);
  r.clear();
  assert.equal(r.count(), 0);
  const seeded = running([3, 1, 2]);
  assert.equal(seeded.p50(), 2);
  const small = running(10); // capacity 10: a uniform sample of what it saw
  for (let v = 0; v < 1000; v++) small.add(v);
  assert.equal(small.count(), 1000);
  assert.ok(small.p99() >= 0 && small.p99() < 1000);
});
