// The lab editor's paths into a scenario (static/js/lab-fields.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { getPath, parsePath, pruneEmpty, setPath } from "../js/lab-fields.js";

test("parsePath splits names and indexes", () => {
  assert.deepEqual(parsePath("topology.hostLink.rate"), ["topology", "hostLink", "rate"]);
  assert.deepEqual(parsePath("workload[0].flows[12].size"), ["workload", 0, "flows", 12, "size"]);
  assert.deepEqual(parsePath("a[1][2]"), ["a", 1, 2]);
});

test("getPath and setPath walk and build documents", () => {
  const doc = {};
  setPath(doc, "workload[1].size", "10KB");
  setPath(doc, "cc.params.wr", 10);
  assert.equal(getPath(doc, "workload[1].size"), "10KB");
  assert.equal(getPath(doc, "cc.params.wr"), 10);
  assert.equal(getPath(doc, "cc.nothing.here"), undefined);
  assert.ok(Array.isArray(doc.workload));
});

test("pruneEmpty drops objects left empty, at any depth, and keeps the rest", () => {
  const doc = { a: "", b: { c: {}, d: 1 }, e: { f: { g: {} } }, h: [] };
  pruneEmpty(doc);
  assert.deepEqual(doc, { a: "", b: { d: 1 }, h: [] });
});
