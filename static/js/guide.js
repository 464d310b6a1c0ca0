// guide.js: what a run will cost before it starts, and how the lab guides a
// newcomer with it (pure functions: node --test static/jstest/). The cost is
// the server's estimate (POST /api/scenarios/validate: cost).
import { fmt } from "./charts/format.js";

// simSeconds is the simulated time a run is expected to reach (its
// duration, or when it runs until its flows finish, the server's guess).
export const simSeconds = (cost) => cost.expectSimSeconds || cost.simSeconds || 0;

// confirmOver is the expected wall time (s) over which Run asks first.
export const confirmOver = 30;

// speeds are the lab's slow-motion choices, simulated µs per wall second,
// fastest first.
export const speeds = [10000, 1000, 100, 10];

// aboutHowLong says an expected wall time as the home page's cards do.
export function aboutHowLong(s) {
  if (!(s >= 1)) return "under a second";
  if (s < 90) return "about " + Math.ceil(s) + " s";
  if (s < 90 * 60) return "about " + Math.round(s / 60) + " min";
  return "about " + Math.round(s / 3600) + " h";
}

// expectedWall is how long a run is expected to take at speed (simulated
// µs per wall second, or "max"): the engine's estimate, or the pacing's
// when that is slower.
export function expectedWall(cost, speed) {
  const w = cost.wallSeconds || 0;
  if (speed === "max" || !(speed > 0)) return w;
  return Math.max(w, (simSeconds(cost) * 1e6) / speed);
}

// costText is the line the lab shows before a run; when the engine's speed
// decides the time (not the pacing), it says what that speed is drawn
// from (cost.wallBasis: "from 12 runs of this size on this server").
export function costText(cost, speed) {
  const w = expectedWall(cost, speed);
  const basis = cost.wallBasis && w === (cost.wallSeconds || 0) ? " (" + cost.wallBasis + ")" : "";
  return cost.hosts + " hosts, " + cost.flows + " flows, " + fmt.ns(simSeconds(cost) * 1e9) +
    " simulated; expected to take " + aboutHowLong(w) + basis;
}

// needsConfirm: a run expected to take longer than confirmOver asks first.
export function needsConfirm(cost, speed) {
  return expectedWall(cost, speed) > confirmOver;
}

// slowMotion is the speed a tiny run opens at, so there is something to
// watch: the fastest of speeds that stretches it to at least 5 s, for a run
// expected to take under half a second ("max" otherwise).
export function slowMotion(cost) {
  if (!cost || !(simSeconds(cost) > 0) || (cost.wallSeconds || 0) >= 0.5) return "max";
  for (const v of speeds) {
    if ((simSeconds(cost) * 1e6) / v >= 5) return v;
  }
  return speeds[speeds.length - 1];
}

// simulatedText is the progress line's simulated part: "1.2 ms of 10 ms
// simulated" (total in ns; 0: unknown).
export function simulatedText(simNs, totalNs) {
  return fmt.ns(simNs) + (totalNs > 0 ? " of " + fmt.ns(totalNs) : "") + " simulated";
}

const timeUnits = { s: 1e9, ms: 1e6, us: 1e3, "µs": 1e3, ns: 1, ps: 1e-3 };

// timeNs reads a scenario time ("2.5ms", "40us", "1s") in nanoseconds;
// anything else (no duration, a number without a unit) is 0: unknown.
export function timeNs(v) {
  const m = typeof v === "string" ? /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(s|ms|us|µs|ns|ps)\s*$/i.exec(v) : null;
  if (!m) return 0;
  const unit = timeUnits[m[2]] ?? timeUnits[m[2].toLowerCase()];
  return Number(m[1]) * unit;
}

// simTime writes a simulated time in ps as the server's pages do
// (scenarios.FormatTime): the largest of s, ms, us, ns, ps that leaves a
// value >= 1, with the fewest exact decimals ("2.961039us"); zero "0s".
export function simTime(ps) {
  ps = Math.round(ps);
  if (ps === 0) return "0s";
  const units = [["ps", 1], ["ns", 1e3], ["us", 1e6], ["ms", 1e9], ["s", 1e12]];
  let u = units[0];
  for (const c of units) if (Math.abs(ps) >= c[1]) u = c;
  const sign = ps < 0 ? "-" : "";
  const a = Math.abs(ps);
  const whole = Math.floor(a / u[1]);
  const digits = Math.round(Math.log10(u[1]));
  const frac = digits ? String(a - whole * u[1]).padStart(digits, "0").replace(/0+$/, "") : "";
  return sign + whole + (frac ? "." + frac : "") + u[0];
}

// paramValue writes a parameter value as the server's pages do (Go's
// strconv.FormatFloat(v, 'g', 4, 64)): 4 significant digits, trailing
// zeros dropped, exponent form below 1e-4 or from 1e4 ("1.234e+04").
export function paramValue(v) {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return "0";
  const [m, e] = v.toExponential(3).split("e");
  const exp = Number(e);
  const mant = m.includes(".") ? m.replace(/0+$/, "").replace(/\.$/, "") : m;
  if (exp < -4 || exp >= 4) return mant + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
  return String(Number(v.toPrecision(4)));
}

// changeText is a live change as the run page's table says it ("ai: 20 →
// 40, hai → 1", names sorted), the old values from cur, which it updates.
export function changeText(cur, params) {
  const parts = [];
  for (const k of Object.keys(params).sort()) {
    const v = params[k];
    parts.push(k in cur ? k + ": " + paramValue(cur[k]) + " → " + paramValue(v) : k + " → " + paramValue(v));
    cur[k] = v;
  }
  return parts.join(", ");
}

// warningText heads an ns-3 import's warnings (import-ns3.js): the config keys the lab does
// not understand (left out of the scenario) and the algorithm keys the
// config does not set whose value here differs from third.cc's own.
export function warningText(warnings) {
  if (!warnings || warnings.length === 0) return "";
  const unknown = warnings.filter((w) => w.endsWith("left out of the scenario")).length;
  const unset = warnings.filter((w) => w.includes(": not set: ")).length;
  const parts = [];
  if (unknown > 0) {
    parts.push(unknown + (unknown === 1 ? " config key the lab does not understand was" : " config keys the lab does not understand were") +
      " left out of the scenario");
  }
  if (unset > 0) {
    parts.push(unset + (unset === 1 ? " algorithm key is not set in the config and takes" : " algorithm keys are not set in the config and take") +
      " the lab's value");
  }
  const other = warnings.length - unknown - unset;
  if (other > 0) parts.push(other + (other === 1 ? " other note" : " other notes"));
  return parts.join("; ") + ":";
}
