// Locked fields of a pinned exercise (static/js/exercise-lock.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { isLocked } from "../js/exercise-lock.js";

test("a locked path locks itself and what lies under it, nothing else", () => {
  const locked = ["topology", "workload[0]", "cc.algorithm"];
  assert.ok(isLocked(locked, "topology"));
  assert.ok(isLocked(locked, "topology.hostLink.rate"));
  assert.ok(isLocked(locked, "workload[0].size"));
  assert.ok(isLocked(locked, "cc.algorithm"));
  assert.ok(!isLocked(locked, "topologyX"));
  assert.ok(!isLocked(locked, "workload[1].size"));
  assert.ok(!isLocked(locked, "workload[00]"));
  assert.ok(!isLocked(locked, "cc.params.g"));
  assert.ok(!isLocked(locked, ""));
  assert.ok(!isLocked([], "seed"));
});
