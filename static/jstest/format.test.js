// Unit formatting (static/js/charts/format.js): node --test static/jstest/
import { test } from "node:test";
import assert from "node:assert/strict";
import { decimalsFor, fmt, fmtFor, prefixIndex, sig3, tickValues, unitOf } from "../js/charts/format.js";

test("formatters pick one decimal prefix and three significant digits", () => {
  const cases = [
    [fmt.bytes, 0, "0 B"],
    [fmt.bytes, 999, "999 B"],
    [fmt.bytes, 999.6, "1 KB"], // rounds up into the next prefix, not "1000 B"
    [fmt.bytes, 1500, "1.5 KB"],
    [fmt.bytes, 13_600_000, "13.6 MB"],
    [fmt.bps, 94.98e9, "95 Gbps"],
    [fmt.bps, 100e9, "100 Gbps"],
    [fmt.ns, 147_000, "147 µs"],
    [fmt.ns, 1_500_000, "1.5 ms"],
    [fmt.ns, 2.5e9, "2.5 s"],
    [fmt.ns, 5e12, "5000 s"], // no prefix beyond seconds
    [fmt.num, 9999, "9999"], // plain numbers get a prefix only from 10^4
    [fmt.num, 12_345, "12.3 k"],
    [fmt.num, -0.5, "-0.5"],
    [fmt.num, 0.0001234, "1.23e-4"],
    [fmt.bytes, null, ""],
    [fmt.bytes, "", ""],
    [fmt.bytes, NaN, ""],
    [fmt.bytes, Infinity, "∞"],
    [fmt.bytes, -Infinity, "−∞"],
  ];
  for (const [f, v, want] of cases) assert.equal(f(v), want, `format ${v}`);
});

test("sig3, prefixIndex and decimalsFor", () => {
  assert.equal(sig3(0), "0");
  assert.equal(sig3(1234.5), "1235");
  assert.equal(sig3(12.345), "12.3");
  assert.equal(sig3(1.0), "1");
  assert.equal(prefixIndex("bytes", 999), 0);
  assert.equal(prefixIndex("bytes", 1000), 1);
  assert.equal(prefixIndex("ns", 1e15), 3); // seconds is the last
  assert.equal(prefixIndex("", 9999), 0);
  assert.equal(decimalsFor(0), 0);
  assert.equal(decimalsFor(0.25), 2);
  assert.equal(decimalsFor(2), 0);
  assert.equal(decimalsFor(1 / 3), 6);
});

test("fmtFor falls back to plain numbers, unitOf maps the vocabulary's units", () => {
  assert.equal(fmtFor("bytes")(2048), "2.05 KB");
  assert.equal(fmtFor("furlongs")(2048), "2048");
  assert.equal(fmtFor(undefined)(5), "5");
  for (const [u, want] of [["B", "bytes"], ["bps", "bps"], ["ns", "ns"], ["", ""], ["x", ""]]) assert.equal(unitOf(u), want);
});

test("linear axis ticks share one prefix and enough decimals", () => {
  const u = { scales: { y: { distr: 1 } }, axes: [{}, { scale: "y" }] };
  const ticks = tickValues("bytes", true);
  assert.deepEqual(ticks(u, [0, 500_000, 1_000_000, 1_500_000], 1, 0, 500_000), ["0 MB", "0.5 MB", "1.0 MB", "1.5 MB"]);
  assert.deepEqual(ticks(u, [0, 2000, null], 1, 0, 2000), ["0 KB", "2 KB", null]);
  const log = { scales: { y: { distr: 3 } }, axes: [{}, { scale: "y" }] };
  assert.deepEqual(ticks(log, [10, 1000, 1e6], 1, 0, 0), ["10 B", "1 KB", "1 MB"]);
});
