// the lab's note on a new scenario (static/js/fork.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { forkNote, sameWorkload, stable } from "../js/fork.js";

test("stable sorts keys at every depth", () => {
  assert.equal(stable({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } }), '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}');
});

test("a change of cc alone keeps the workload", () => {
  const a = { name: "x", cc: { algorithm: "dcqcn", params: { ai: 5 } }, workload: [{ kind: "incast" }] };
  const b = { workload: [{ kind: "incast" }], name: "x", cc: { algorithm: "hpcc" } };
  assert.ok(sameWorkload(a, b));
  assert.ok(!sameWorkload(a, { ...b, seed: 2 }));
  const n = forkNote("old", a, b, "new");
  assert.equal(n.same, true);
  assert.match(n.text, /same scenario as old.*hpcc/);
  assert.equal(forkNote("old", a, { ...b, seed: 2 }, "new").same, false);
  assert.equal(forkNote("same", a, b, "same"), null);
  assert.equal(forkNote("", a, b, "new"), null);
});
