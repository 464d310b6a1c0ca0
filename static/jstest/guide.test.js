// The lab's guidance (static/js/guide.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { aboutHowLong, changeText, paramValue, simTime, costText, expectedWall, needsConfirm, simulatedText, slowMotion, timeNs, warningText } from "../js/guide.js";

test("how long, in a card's words", () => {
  assert.equal(aboutHowLong(0.03), "under a second");
  assert.equal(aboutHowLong(1.2), "about 2 s");
  assert.equal(aboutHowLong(170), "about 3 min");
  assert.equal(aboutHowLong(2 * 3600), "about 2 h");
});

test("a paced run takes at least its simulated time over its speed", () => {
  const c = { hosts: 5, flows: 4, simSeconds: 0.005, wallSeconds: 0.03 };
  assert.equal(expectedWall(c, "max"), 0.03);
  assert.equal(expectedWall(c, 1000), 5);
  assert.equal(costText(c, "max"), "5 hosts, 4 flows, 5 ms simulated; expected to take under a second");
});

test("the cost line says what the engine's speed is drawn from, unless the pacing decides", () => {
  const c = { hosts: 5, flows: 4, simSeconds: 0.005, wallSeconds: 2.5, wallBasis: "from 3 runs of this size on this server" };
  assert.equal(costText(c, "max"), "5 hosts, 4 flows, 5 ms simulated; expected to take about 3 s (from 3 runs of this size on this server)");
  assert.equal(costText(c, 1000), "5 hosts, 4 flows, 5 ms simulated; expected to take about 5 s");
});

test("Run asks first over 30 s", () => {
  assert.equal(needsConfirm({ simSeconds: 0.002, wallSeconds: 25 }, "max"), false);
  assert.equal(needsConfirm({ simSeconds: 0.002, wallSeconds: 31 }, "max"), true);
  assert.equal(needsConfirm({ simSeconds: 0.1, wallSeconds: 1 }, 1000), true); // 100 s of pacing
});

test("tiny runs open in slow motion", () => {
  assert.equal(slowMotion({ simSeconds: 0.005, wallSeconds: 0.03 }), 1000); // 5 ms at 1 ms/s: 5 s
  assert.equal(slowMotion({ simSeconds: 0.06, wallSeconds: 0.2 }), 10000); // 60 ms: 6 s
  assert.equal(slowMotion({ simSeconds: 40e-6, wallSeconds: 0.001 }), 10);
  // flows into one port take longer than the largest alone: the server's guess
  assert.equal(slowMotion({ simSeconds: 80e-6, expectSimSeconds: 640e-6, wallSeconds: 0.003 }), 100);
  assert.equal(slowMotion({ simSeconds: 0.01, wallSeconds: 3 }), "max");
});

test("progress says simulated time out of the duration", () => {
  assert.equal(simulatedText(1.2e6, 10e6), "1.2 ms of 10 ms simulated");
  assert.equal(simulatedText(1.2e6, 0), "1.2 ms simulated");
});

test("a scenario's duration in nanoseconds, 0 when unknown", () => {
  assert.equal(timeNs("2.5ms"), 2.5e6);
  assert.equal(timeNs("40us"), 40e3);
  assert.equal(timeNs("1s"), 1e9);
  assert.equal(timeNs("20.96ns"), 20.96);
  assert.equal(timeNs("500ps"), 0.5);
  assert.equal(timeNs(undefined), 0);
  assert.equal(timeNs("10"), 0);
  assert.equal(timeNs("fast"), 0);
});

test("simulated times and values as the server's pages write them", () => {
  assert.equal(simTime(0), "0s");
  assert.equal(simTime(2961039), "2.961039us");
  assert.equal(simTime(2.5e9), "2.5ms");
  assert.equal(simTime(20960), "20.96ns");
  assert.equal(simTime(3e12), "3s");
  assert.equal(simTime(999), "999ps");
  assert.equal(paramValue(40), "40");
  assert.equal(paramValue(0.00390625), "0.003906");
  assert.equal(paramValue(12346), "1.235e+04"); // (an exact tie such as 12345 Go rounds to even, JS up)
  assert.equal(paramValue(9999.5), "1e+04");
  assert.equal(paramValue(1e-4), "0.0001");
  assert.equal(paramValue(1000), "1000");
  assert.equal(paramValue(0.00001), "1e-05");
  assert.equal(paramValue(0.5), "0.5");
});

test("a live change reads old → new and moves the current values on", () => {
  const cur = { ai: 20 };
  assert.equal(changeText(cur, { ai: 40 }), "ai: 20 → 40");
  assert.equal(changeText(cur, { hai: 1, ai: 60 }), "ai: 40 → 60, hai → 1");
  assert.deepEqual(cur, { ai: 60, hai: 1 });
});

test("an ns-3 import's warnings, headed by what they are", () => {
  assert.equal(warningText([]), "");
  assert.equal(warningText(["config.txt:59: NEW_KEY: not a config key the lab understands: left out of the scenario"]),
    "1 config key the lab does not understand was left out of the scenario:");
  assert.equal(warningText([
    "config.txt:59: A: not a config key the lab understands: left out of the scenario",
    "config.txt:60: B: not a config key the lab understands: left out of the scenario",
    "config.txt: ACK_HIGH_PRIO: not set: the lab uses ackHighPriority 1 (run.py's value), where third.cc's built-in value is 0; set it to run the same experiment",
  ]), "2 config keys the lab does not understand were left out of the scenario; 1 algorithm key is not set in the config and takes the lab's value:");
});
