package cc

import "math"

// Helpers shared by the rate-based algorithms. Parameters are stored in their
// registry units (Mbps, µs); the state machines work in bits per second and
// picoseconds.

const mbps = 1e6

func usec(v float64) Time { return Time(math.Round(v * float64(Microsecond))) }

// rateBps converts a float rate to the engine's integer bps, at least 1.
func rateBps(r float64) int64 {
	if r < 1 {
		return 1
	}
	if r >= float64(Unlimited) {
		return Unlimited
	}
	return int64(r)
}

// varWindow is HPCC's VAR_WIN: the window shrinks with the rate, maxBDP ×
// rate / line rate, and never reaches 0 (HPCC's GetWin: at least 1 byte).
func varWindow(maxBDP int64, rate, lineRate float64) int64 {
	w := int64(float64(maxBDP) * rate / lineRate)
	if w < 1 {
		w = 1
	}
	return w
}

// pace hands a rate-based algorithm's rate to the engine, with a window of
// max BDP × rate / line rate (HPCC's run.py var_win) or none.
func pace(env Env, rate float64, window bool, maxBDP int64, lineRate float64) {
	env.SetRate(rateBps(rate))
	if window {
		env.SetWindow(varWindow(maxBDP, rate, lineRate))
	} else {
		env.SetWindow(Unlimited)
	}
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

// Param constructors keep the registry tables short and uniform.

func rateParam(name string, def float64, help string) Param {
	return Param{Name: name, Kind: KindRate, Unit: "Mbps", Default: def, Min: 0, Max: 1e7, ScaleWithRate: true, Live: true, Help: help}
}

func timeParam(name string, def float64, help string) Param {
	return Param{Name: name, Kind: KindTime, Unit: "us", Default: def, Min: 0.001, Max: 1e6, Live: true, Help: help}
}

func fracParam(name string, def float64, help string) Param {
	return Param{Name: name, Kind: KindNumber, Default: def, Min: 0, Max: 1, Live: true, Help: help}
}

func boolParam(name string, def bool, live bool, help string) Param {
	d := 0.0
	if def {
		d = 1
	}
	return Param{Name: name, Kind: KindBool, Default: d, Min: 0, Max: 1, Live: live, Help: help}
}

// ackPriorityParam is HPCC's ACK_HIGH_PRIO as a parameter: the receiving
// NIC queues this algorithm's ACKs and NACKs in its high-priority queue
// (served first, never paused by PFC) or with its data (held while the NIC
// is paused). It says nothing of the switches, where ACKs travel in their
// data's class unless switch.ackClass is "high".
func ackPriorityParam(def bool, help string) Param {
	return boolParam("ackHighPriority", def, false, "The receiver's NIC queues ACKs and NACKs in its high-priority queue, never paused by PFC "+
		"(HPCC's ACK_HIGH_PRIO, a host setting: at switches ACKs share their data's class unless switch.ackClass is high; "+help+").")
}

// run.py's ECN thresholds for every scheme but DCTCP, at 100 Gbps.
var runPyECN = &ECNDefaults{Kmin: 400_000, Kmax: 1_600_000, Pmax: 0.2}

// b2f is 1 for true and 0 for false (bool parameters and 0/1 gauges).
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
