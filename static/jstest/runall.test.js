// "run with every algorithm" (static/js/runall.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { compareOrder, runAllPlan } from "../js/runall.js";

test("the original run's algorithm is not started again", () => {
  const algos = [{ name: "dcqcn" }, { name: "hpcc" }, { name: "timely" }];
  assert.deepEqual(runAllPlan(algos, "hpcc"), ["dcqcn", "timely"]);
  assert.deepEqual(runAllPlan(algos, ""), ["dcqcn", "hpcc", "timely"]);
  assert.deepEqual(runAllPlan(["a", "b"], "mixed"), ["a", "b"]);
});

test("the original run is compared first", () => {
  assert.deepEqual(compareOrder("r0", ["r1", "r2"]), ["r0", "r1", "r2"]);
  assert.deepEqual(compareOrder("r0", ["r1", "r0"]), ["r0", "r1"]);
  assert.deepEqual(compareOrder("", ["r1"]), ["r1"]);
});
