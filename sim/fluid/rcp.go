package fluid

// RCP with and without the Averaging Principle (§3.2 of seed 003, eq. (34);
// the extract shared/spec/seeds/003-qcn.md §3.4 and §5 item 6): one router
// of capacity C, N long-lived flows that all send at the rate the router
// advertised one RTT ago, a fluid queue, and the router's rate update every
// T with d0 held fixed (footnote 9: RCP's automatic gain adjustment is
// disabled so that the loop can be pushed past its delay margin).

import (
	"fmt"
	"math"
)

// RCP variants.
const (
	RCPBasic = "rcp"     // (34): R ← R (1 + (T/d0) F_b) every T
	RCPAP    = "ap-rcp"  // (34) as the feedback change, R_T ← R before it; one averaging R ← (R + R_T)/2 at T/2
	RCPAP2   = "ap2-rcp" // the same with two averagings, at T/3 and 2T/3 (the text's "AP2-TCP")
	RCPPD    = "pd-rcp"  // §3.2's PD-RCP: F_b replaced by F_b/2 + (F_b − F_b(t−T))/4
)

// RCPConfig is the RCP loop. The zero value is not usable: start from
// DefaultRCPConfig (a JSON body decoded over it keeps the defaults of the
// fields it leaves out).
//
// Readings where the paper is silent (all taken from its text, none tuned
// to its thresholds):
//   - Where the RTT sits: the router's queue is at the sources' end of the
//     bottleneck (as in an ns-2 dumbbell whose access links are short), so
//     the rate the router advertises at t is carried to the receivers, back
//     to the sources and, as their sending rate, into the queue at t + RTT.
//     The total sending rate the trace shows is the queue's arrival rate
//     N·R(t − RTT). Any other split changes only the trace's time origin:
//     the loop delay is the RTT either way.
//   - y(t) is the arrival rate averaged over the last update interval
//     [t − T, t] ("the measured input traffic rate during the last update
//     interval"); q(t) is the queue at the update instant.
//   - What the AP averages: the router's advertised rate R, with R_T the
//     rate just before the last feedback (34) update, as QCN's R_T is
//     (§2.1); every averaging R ← (R + R_T)/2 leaves R_T unchanged (QCN's
//     fast recovery), so AP2's second averaging uses the same R_T.
//     Averagings change the advertised rate, so they reach the queue one
//     RTT later like any other change.
//   - The rate is kept within [MinRateBps, C] after every update, as ns-2's
//     RCP router does (min_pprtt packets per RTT below, the link capacity
//     above); (34) alone can turn negative when the queue is large. The
//     default floor is one 1000-byte packet per d0 (0.4 Mbit/s).
//   - Before t = 0 the router has advertised StartRateBps for ever (the
//     queue is empty); its first update is at T.
//
// With these readings the model's largest stable RTTs (RCPMargins, 1 ms
// resolution) are rcp 83, ap-rcp 194, ap2-rcp 410 and pd-rcp 192 ms,
// against ns-2's 110/115, 240/250, "stable at 480" and 240/250 ms in the
// paper: the ordering and the gains from averaging (×2.3 and ×4.9 against
// the paper's ×2.2 and over ×4.3) hold, every threshold sits 15–26% lower.
// Reading y as the instantaneous arrival rate instead (not the text's
// reading) gives 100, 200, 350 and 200 ms; a loop delay of RTT/2 would
// double every margin.
type RCPConfig struct {
	C          float64 `json:"capacityBps"`  // link capacity, bits/s (paper: 2.4 Gbit/s)
	N          int     `json:"flows"`        // long-lived flows (paper: 10)
	Alpha      float64 `json:"alpha"`        // α (paper: 0.1)
	Beta       float64 `json:"beta"`         // β (paper: 1)
	T          float64 `json:"updateS"`      // update period T, s (paper: 50 ms)
	D0         float64 `json:"d0S"`          // d0, held fixed, s (paper: 20 ms)
	StartRate  float64 `json:"startRateBps"` // per-flow R before t = 0, bits/s (default C/(2N): half load)
	MinRate    float64 `json:"minRateBps"`   // per-flow floor, bits/s (default 8000 bits per d0)
	RunS       float64 `json:"runS"`         // the stability test's run, s (default 300)
	WindowS    float64 `json:"windowS"`      // its measuring window, s (default 20)
	RTTStepS   float64 `json:"rttStepS"`     // the sweep's RTT step, s (default 5 ms)
	Resolution float64 `json:"resolutionS"`  // the sweep's refinement, s (default 1 ms; 0: no refinement)
}

// DefaultRCPConfig is the paper's Fig. 13 setting: 10 flows on a 2.4 Gbit/s
// link, α = 0.1, β = 1, T = 50 ms, d0 = 20 ms.
func DefaultRCPConfig() RCPConfig {
	return RCPConfig{
		C: 2.4e9, N: 10, Alpha: 0.1, Beta: 1, T: 0.05, D0: 0.02,
		StartRate: 2.4e9 / 20, MinRate: 8000 / 0.02,
		RunS: 300, WindowS: 20, RTTStepS: 0.005, Resolution: 0.001,
	}
}

// RCPResult is one variant's largest stable RTT.
type RCPResult struct {
	Name           string  `json:"name"`
	MaxStableRttMs float64 `json:"maxStableRttMs"`
}

// RCPTrace is a run sampled every `every` seconds: time (s), the flows'
// total sending rate (bits/s) and the router's queue (bytes).
type RCPTrace struct {
	T    []float64 `json:"t"`
	Rate []float64 `json:"rate"`
	Q    []float64 `json:"q"`
}

// rcpMaxEvents bounds a run's length in update periods and samples.
const rcpMaxEvents = 10_000_000

// Validate reports the first field outside the model's domain as a
// *ParamError named by its JSON key.
func (cfg RCPConfig) Validate() error {
	bad := func(name, format string, args ...any) error {
		return &ParamError{name, fmt.Sprintf(format, args...)}
	}
	pos := func(v float64) bool { return v > 0 && apFinite(v) }
	switch {
	case !pos(cfg.C):
		return bad("capacityBps", "the capacity must be positive (bits/s), got %g", cfg.C)
	case cfg.N < 1:
		return bad("flows", "at least one flow, got %d", cfg.N)
	case !(cfg.Alpha >= 0) || !apFinite(cfg.Alpha):
		return bad("alpha", "α must be zero or positive, got %g", cfg.Alpha)
	case !(cfg.Beta >= 0) || !apFinite(cfg.Beta):
		return bad("beta", "β must be zero or positive, got %g", cfg.Beta)
	case !pos(cfg.T):
		return bad("updateS", "the update period must be positive (s), got %g", cfg.T)
	case !pos(cfg.D0):
		return bad("d0S", "d0 must be positive (s), got %g", cfg.D0)
	case !pos(cfg.MinRate) || cfg.MinRate > cfg.C:
		return bad("minRateBps", "the rate floor must lie in (0, C] (bits/s), got %g", cfg.MinRate)
	case !(cfg.StartRate >= cfg.MinRate && cfg.StartRate <= cfg.C):
		return bad("startRateBps", "the start rate must lie in [minRateBps, C] (bits/s), got %g", cfg.StartRate)
	case !pos(cfg.RunS) || cfg.RunS/cfg.T > rcpMaxEvents:
		return bad("runS", "the stability run must be positive and at most %d update periods (s), got %g", rcpMaxEvents, cfg.RunS)
	case !pos(cfg.WindowS) || 2*cfg.WindowS > cfg.RunS:
		return bad("windowS", "the window must be positive and at most half the run (s), got %g", cfg.WindowS)
	case !pos(cfg.RTTStepS):
		return bad("rttStepS", "the RTT step must be positive (s), got %g", cfg.RTTStepS)
	case !(cfg.Resolution >= 0) || cfg.Resolution > cfg.RTTStepS:
		return bad("resolutionS", "the refinement must lie in [0, rttStepS] (s), got %g", cfg.Resolution)
	}
	return nil
}

func rcpVariant(v string) error {
	switch v {
	case RCPBasic, RCPAP, RCPAP2, RCPPD:
		return nil
	}
	return &ParamError{"variant", fmt.Sprintf("no variant %q; variants: rcp, ap-rcp, ap2-rcp, pd-rcp", v)}
}

// rcpRun is the event-driven run. The arrival rate is piecewise constant
// (it changes one RTT after each change of the advertised rate), so the
// queue, projected at 0, and the bits counted for y are integrated
// exactly. onRate sees every arrival-rate change (time, total rate);
// onSample every sample (time, total rate, queue in bits). A negative
// `every` takes no samples.
func (cfg RCPConfig) rcpRun(variant string, rtt, duration, every float64,
	onRate func(t, rate float64), onSample func(t, rate, q float64)) {
	n := float64(cfg.N)
	var mids []float64 // averaging instants, fractions of T
	switch variant {
	case RCPAP:
		mids = []float64{0.5}
	case RCPAP2:
		mids = []float64{1.0 / 3, 2.0 / 3}
	}
	type change struct{ at, rate float64 }
	var (
		r, rT   = cfg.StartRate, cfg.StartRate // advertised rate R, and R_T
		fbPrev  = 0.0                          // F_b(t − T) for PD-RCP; 0 before the first update
		arrival = n * cfg.StartRate            // the queue's arrival rate now
		q       = 0.0                          // bits
		counted = 0.0                          // bits arrived since the last update
		pending []change
		k       = 1 // the next update is at kT …
		j       = 0 // … after the in-interval averaging j of period k−1
		s       = 0 // the next sample
		now     = 0.0
	)
	routerAt := func() float64 {
		if k > 1 && j < len(mids) {
			return (float64(k-1) + mids[j]) * cfg.T
		}
		return float64(k) * cfg.T
	}
	// the averagings of period k−1 come after the update at (k−1)T; the
	// first period (before the first update) has none
	advertise := func(at float64) { pending = append(pending, change{at + rtt, n * r}) }
	if onRate != nil {
		onRate(0, arrival)
	}
	for {
		next := routerAt()
		if len(pending) > 0 {
			next = math.Min(next, pending[0].at)
		}
		if every > 0 {
			next = math.Min(next, float64(s)*every)
		}
		if next > duration {
			break
		}
		if h := next - now; h > 0 {
			q = math.Max(0, q+(arrival-cfg.C)*h) // exact: the rate is constant over h
			counted += arrival * h
			now = next
		}
		switch {
		case len(pending) > 0 && pending[0].at <= now:
			arrival = pending[0].rate
			pending = pending[1:]
			if onRate != nil {
				onRate(now, arrival)
			}
		case routerAt() <= now:
			if k > 1 && j < len(mids) { // averaging change
				r = (r + rT) / 2
				j++
			} else { // feedback change (34)
				y := counted / cfg.T
				counted = 0
				fb := (cfg.Alpha*(cfg.C-y) - cfg.Beta*q/cfg.D0) / cfg.C
				g := fb
				if variant == RCPPD {
					g = fb/2 + (fb-fbPrev)/4
				}
				fbPrev = fb
				rT = r
				r = math.Min(cfg.C, math.Max(cfg.MinRate, r*(1+cfg.T/cfg.D0*g)))
				k++
				j = 0
			}
			advertise(now)
		default:
			onSample(now, arrival, q)
			s++
		}
	}
}

// Simulate runs variant at the given RTT for duration seconds and samples
// the total sending rate and the queue every `every` seconds.
func (cfg RCPConfig) Simulate(variant string, rtt, duration, every float64) (*RCPTrace, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := rcpVariant(variant); err != nil {
		return nil, err
	}
	switch {
	case !(rtt >= 0) || !apFinite(rtt):
		return nil, &ParamError{"rtt", fmt.Sprintf("the RTT must be zero or positive (s), got %g", rtt)}
	case !(duration > 0) || !apFinite(duration) || duration/cfg.T > rcpMaxEvents:
		return nil, &ParamError{"duration", fmt.Sprintf("must be positive and at most %d update periods (s), got %g", rcpMaxEvents, duration)}
	case !(every > 0) || !apFinite(every) || duration/every > rcpMaxEvents:
		return nil, &ParamError{"every", fmt.Sprintf("the sampling interval must be positive with at most %d samples (s), got %g", rcpMaxEvents, every)}
	}
	tr := &RCPTrace{}
	cfg.rcpRun(variant, rtt, duration, every, nil, func(t, rate, q float64) {
		tr.T = append(tr.T, t)
		tr.Rate = append(tr.Rate, rate)
		tr.Q = append(tr.Q, q/8)
	})
	return tr, nil
}

// rcpSwings is the peak-to-peak of the total sending rate, relative to C,
// over the windows [RunS/2 − WindowS, RunS/2] and [RunS − WindowS, RunS],
// from its exact piecewise-constant path.
func (cfg RCPConfig) rcpSwings(variant string, rtt float64) (early, late float64) {
	w := cfg.WindowS
	starts := [2]float64{cfg.RunS/2 - w, cfg.RunS - w}
	lo := [2]float64{math.Inf(1), math.Inf(1)}
	hi := [2]float64{math.Inf(-1), math.Inf(-1)}
	var atStart [2]float64 // the rate in force when the window opens
	cfg.rcpRun(variant, rtt, cfg.RunS, -1, func(t, rate float64) {
		for i, a := range starts {
			if t <= a {
				atStart[i] = rate
			} else if t <= a+w {
				lo[i], hi[i] = math.Min(lo[i], rate), math.Max(hi[i], rate)
			}
		}
	}, nil)
	for i := range starts {
		lo[i], hi[i] = math.Min(lo[i], atStart[i]), math.Max(hi[i], atStart[i])
	}
	return (hi[0] - lo[0]) / cfg.C, (hi[1] - lo[1]) / cfg.C
}

// rcpSettled is the swing (relative to C) below which the rate counts as
// settled: 0.1% of the link, far below any limit cycle the model shows.
const rcpSettled = 1e-3

// StableAt reports whether variant is stable at the given RTT: run from
// half load for RunS seconds, the total sending rate's peak-to-peak over
// the last WindowS seconds has settled (below 0.1% of C), or has shrunk
// to under half of its value over the window that ends at RunS/2. A
// sustained or growing oscillation (the unstable loop's limit cycle, which
// the queue's projection at 0 and the rate clamps bound) fails both.
func (cfg RCPConfig) StableAt(variant string, rtt float64) (bool, error) {
	if err := cfg.Validate(); err != nil {
		return false, err
	}
	if err := rcpVariant(variant); err != nil {
		return false, err
	}
	if !(rtt >= 0) || !apFinite(rtt) {
		return false, &ParamError{"rtt", fmt.Sprintf("the RTT must be zero or positive (s), got %g", rtt)}
	}
	early, late := cfg.rcpSwings(variant, rtt)
	return late < rcpSettled || late < early/2, nil
}

// MaxStableRTT is variant's largest stable RTT: the RTT grid of RTTStepS
// from RTTStepS up to maxRTT is scanned until the first unstable RTT, and
// the step before it is refined by bisection to Resolution. It is 0 when
// the first grid RTT is already unstable and maxRTT (rounded down to the
// grid) when none is.
func (cfg RCPConfig) MaxStableRTT(variant string, maxRTT float64) (float64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	if err := rcpVariant(variant); err != nil {
		return 0, err
	}
	if !(maxRTT >= cfg.RTTStepS) || !apFinite(maxRTT) || maxRTT/cfg.RTTStepS > 10_000 {
		return 0, &ParamError{"maxRTT", fmt.Sprintf("must lie in [rttStepS, 10000 rttStepS] (s), got %g", maxRTT)}
	}
	stable := func(rtt float64) bool { ok, _ := cfg.StableAt(variant, rtt); return ok }
	lo := 0.0
	steps := int(math.Floor(maxRTT/cfg.RTTStepS + 1e-9))
	for i := 1; i <= steps; i++ {
		hi := float64(i) * cfg.RTTStepS
		if stable(hi) {
			lo = hi
			continue
		}
		if cfg.Resolution > 0 && lo > 0 {
			for hi-lo > cfg.Resolution*(1+1e-9) {
				mid := (lo + hi) / 2
				if stable(mid) {
					lo = mid
				} else {
					hi = mid
				}
			}
			lo = math.Floor(lo/cfg.Resolution+1e-9) * cfg.Resolution
		}
		return lo, nil
	}
	return float64(steps) * cfg.RTTStepS, nil
}

// RCPMargins is the largest stable RTT of rcp, ap-rcp, ap2-rcp and pd-rcp,
// in that order, swept up to maxRTT seconds.
func RCPMargins(cfg RCPConfig, maxRTT float64) ([]RCPResult, error) {
	var out []RCPResult
	for _, v := range []string{RCPBasic, RCPAP, RCPAP2, RCPPD} {
		m, err := cfg.MaxStableRTT(v, maxRTT)
		if err != nil {
			return nil, err
		}
		out = append(out, RCPResult{Name: v, MaxStableRttMs: math.Round(m*1e6) / 1e3})
	}
	return out, nil
}
