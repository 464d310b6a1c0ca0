package cc

import "math"

// FDCC (seed 001: K. Zhang, "An Investigation on Data Center Congestion
// Control Algorithms", MSc thesis, U. Alberta 2023; extract
// shared/spec/seeds/001-fdcc.md). A per-flow deep-RL agent at the sender
// (§1.1) steps on an ACK at most once per gate × the previous step's RTT
// (§1.2: "dynamic, based on 1/2 of the previous RTT"). It observes eight
// features of the most congested hop of its path (§1.3), chosen by the
// largest SWITCHRATE + QLEN (HPCC's per-hop utilisation):
//
//	0 RTT        now − the echoed send time, ÷ the flow's base RTT
//	1 QLEN       the hop's queue (INT), ÷ the hop's BDP (rate × base RTT)
//	2 SWITCHRATE the hop's transmit rate, HPCC's txRate: Δ txBytes / Δ ts
//	             between this step's INT record and the previous step's,
//	             ÷ the hop's rate (the thesis' literal "compare the QLEN"
//	             reading is a queue slope, not a throughput)
//	3 GOODPUT    in-order bytes acknowledged since the previous step ÷ the
//	             step's duration, ÷ the receiver's link rate (the last hop)
//	4 ΔRTT       (RTT_t − RTT_{t−1}) / dt
//	5 ΔQLEN      (QLEN_t − QLEN_{t−1}) / dt, dt in derivUnit (the thesis
//	             says milliseconds; the default is base RTTs, see the param)
//	6 INSRATE    the flow's pacing rate ÷ its line rate
//	7 last_action the previous output ÷ its limit, in [−1, 1]
//
// Every feature is bounded to ±obsClip. The policy (an LSTM-TD3 actor)
// sees the current observation and the last `history` ones. Its output out
// ∈ [−2, 2] becomes a window multiplier (§1.4, reading (b) by default):
//
//	m = 1 + α·out (out ≥ 0), 1/(1 − α·out) (out < 0)    α = 0.5, m ∈ [0.5, 2]
//	WIN ← floor(WIN·m) to whole bytes (floorPackets: packets), within [1 packet, maxWindow × BDP]
//	rate = WIN / base RTT (at most the line rate)
//
// Reading (a), `compound`, multiplies m onto the previous step's m. Flows
// start at the line rate with a window of one BDP (L437, L538).
//
// The staged reward (Algorithm 1) is computed on every step for the
// previous action: draining when SWITCHRATE + QLEN − 1 > drainThreshold
// (0.5), reward −RTT; probing otherwise, reward GOODPUT + 1/RTT −
// (GOODPUT − 1/N)², with N the active flows the switches' per-port counter
// reports at the most congested hop (the privileged training signal of
// §1.5: Algorithm 2 runs in the engine, not on the wire). With shareReward
// THROUGHPUT is counted in fair shares, x = GOODPUT·N, and the probing
// reward is x + 1/RTT − (x − 1)²: the thesis wants the reciprocal RTT to
// have "a similar influence" to throughput (L437), but in link units a
// flow's throughput terms are worth 1/N against 1/RTT's 1, and at N ≥ 4 a
// flow starved to one packet scores within 0.25 of a fair one (measured:
// 0.95 vs 1.18 at 4-to-1, 0.99 vs 1.01 at 16-to-1), so TD3 never learns
// to probe.
//
// INT: HPCC's 42-byte header (five 8-byte hop records and a hop count)
// plus the thesis' flow number, 2 bytes per hop: 52 bytes on every data
// packet and its ACK.
// FDCC is the fdcc registry entry deciding with opt's policy (the
// registry's own uses the shipped policy; a trainer makes its own).
func FDCC(opt Learned) *Algorithm {
	o := opt
	return &Algorithm{
		WithPolicy: func(p Policy) (*Algorithm, error) {
			if err := checkShape(p, fdccObs, 8); err != nil {
				return nil, err
			}
			return FDCC(Learned{Policy: p}), nil
		},
		Name:  "fdcc",
		Title: "FDCC (deep-RL window control, LSTM-TD3)",
		Help: "A neural network trained by reinforcement learning decides, about twice per RTT, how much to grow or shrink " +
			"the flow's window (×0.5 to ×2), from what the most congested switch reports (queue, link rate) and the RTT " +
			"and goodput the flow measures. Trained in the lab with `cclab train fdcc`.",
		Param: []Param{
			{Name: "alpha", Kind: KindNumber, Default: 0.5, Min: 0.01, Max: 1, Live: true,
				Help: "α of the action rescaling m = 1 + α·out or 1/(1 − α·out) (thesis: 0.5, so m ∈ [0.5, 2] for out ∈ [−2, 2])."},
			{Name: "gate", Kind: KindNumber, Default: 0.5, Min: 0, Max: 10, Live: true,
				Help: "Least time between two decisions, in previous RTTs (thesis L508: 1/2 of the previous RTT; 0: every ACK)."},
			{Name: "history", Kind: KindInt, Default: 8, Min: 0, Max: 8, Live: true,
				Help: "Past observations the policy sees (thesis: k ≤ 8; at most the policy's own history length)."},
			boolParam("compound", false, true, "Reading (a) of the thesis' action_{t+1} = action_t·(…): the multiplier compounds on the previous one. Off: reading (b), a fresh multiplier each step (bounded to [0.5, 2], Table 3.1)."),
			{Name: "maxWindow", Kind: KindNumber, Default: 1, Min: 0.01, Max: 100, Live: true,
				Help: "Largest window, in BDPs (thesis L538: no flow has more than one BDP unacknowledged)."},
			boolParam("floorPackets", false, true, "Floor the window to whole packets (one reading of thesis L529: \"rounded down to an integer… each packet has an identical MTU\"); "+
				"off: to whole bytes, the lab's default: at 16-to-1 the fair share is under 5 packets, where a whole-packet floor swallows every multiplier below 1.25 "+
				"(a policy trained with it left the link half idle, slowdown 34 against 16)."),
			{Name: "drainThreshold", Kind: KindNumber, Default: 0.5, Min: 0, Max: 100, Live: true,
				Help: "Algorithm 1's tolerance: the draining phase is SWITCHRATE + QLEN − 1 > this (thesis: 0.5)."},
			{Name: "derivUnit", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: false,
				Help: "Time unit of ΔRTT and ΔQLEN (thesis: milliseconds, i.e. 1000; 0: the flow's base RTT, which keeps the features near the others' scale at 100 Gbps)."},
			{Name: "obsClip", Kind: KindNumber, Default: 50, Min: 1, Max: 1e6, Live: false,
				Help: "Every observation is bounded to ± this before the policy sees it (the thesis gives no bound)."},
			boolParam("shareReward", true, true, "Algorithm 1's THROUGHPUT in fair shares: x = GOODPUT·N, probing reward x + 1/RTT − (x − 1)². "+
				"Off: the thesis' literal units, GOODPUT + 1/RTT − (GOODPUT − 1/N)², whose throughput terms shrink as 1/N "+
				"and which trains policies that starve flows (the reward only: the policy's observations and actions do not change)."),
		},
		INT:                   IntSpec{FixedBytes: 2 + MaxHops*(8+2), FlowCount: true},
		RateChangeReschedules: true,
		Series: []SeriesSpec{
			{Name: "fdcc_rtt", Unit: "", Help: "Observation 1: RTT ÷ base RTT."},
			{Name: "fdcc_qlen", Unit: "", Help: "Observation 2: queue of the most congested hop ÷ its BDP."},
			{Name: "fdcc_switchrate", Unit: "", Help: "Observation 3: transmit rate of the most congested hop ÷ its line rate."},
			{Name: "fdcc_goodput", Unit: "", Help: "Observation 4: in-order goodput since the last step ÷ the receiver's link rate."},
			{Name: "fdcc_drtt", Unit: "", Help: "Observation 5: change of the normalised RTT per derivUnit."},
			{Name: "fdcc_dqlen", Unit: "", Help: "Observation 6: change of the normalised queue per derivUnit."},
			{Name: "fdcc_insrate", Unit: "", Help: "Observation 7: the flow's pacing rate ÷ its line rate."},
			{Name: "fdcc_last_action", Unit: "", Help: "Observation 8: the previous output ÷ its limit."},
			{Name: "fdcc_action", Unit: "", Help: "The window multiplier applied at the last step (0.5 to 2)."},
			{Name: "fdcc_reward", Unit: "", Help: "Algorithm 1's reward for the previous action."},
			{Name: "fdcc_draining", Unit: "", Help: "1 in the queue-draining phase (SWITCHRATE + QLEN − 1 > threshold), 0 when probing."},
			{Name: "fdcc_n", Unit: "", Help: "Active flows at the most congested hop (the reward's N)."},
			{Name: "fdcc_frozen", Unit: "", Help: "Logged once when the policy's output is not a number: the agent stops deciding and the flow keeps its last window and rate.", Stats: true},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			f := &fdcc{info: info, learnedAgent: newLearnedAgent(&o, info, fdccObs)}
			for name, v := range p {
				f.set(name, v)
			}
			return f
		},
	}
}

// fdccObs is the size of FDCC's observation.
const fdccObs = 8

// FDCC series ids.
const (
	fdccSeriesAction = fdccObs + iota
	fdccSeriesReward
	fdccSeriesDraining
	fdccSeriesN
	fdccSeriesFrozen
)

type fdcc struct {
	learnedAgent
	info FlowInfo

	alpha, gate, maxWin, drain, clip float64
	compound, floorPkts, share       bool
	derivUnit                        Time

	win     float64 // bytes
	rate    float64 // bps
	lastM   float64 // the last multiplier (reading (a))
	last    Time    // time of the last step
	lastRTT Time    // RTT measured at the last step
	lastSeq int64
	prevRTT float64 // normalised, at the last step
	prevQ   float64
	stepInt [MaxHops]IntHop // each hop's INT record at the last step
	stepN   int             // hops recorded at the last step
	obs     [fdccObs]float64
	reward  float64
	started bool
	logged  bool // the freeze has been logged
}

func (f *fdcc) set(name string, v float64) bool {
	switch name {
	case "alpha":
		f.alpha = v
	case "gate":
		f.gate = v
	case "history":
		f.setK(int(v))
	case "compound":
		f.compound = v != 0
	case "maxWindow":
		f.maxWin = v
	case "floorPackets":
		f.floorPkts = v != 0
	case "drainThreshold":
		f.drain = v
	case "derivUnit":
		f.derivUnit = usec(v)
	case "obsClip":
		f.clip = v
	case "shareReward":
		f.share = v != 0
	default:
		return false
	}
	return true
}

func (f *fdcc) SetParam(env Env, name string, v float64) error {
	if !f.set(name, v) {
		return &ParamError{Param: name, Msg: "unknown parameter of fdcc"}
	}
	if name == "maxWindow" && f.started {
		f.win = min(f.win, f.maxWindow())
		f.apply(env)
	}
	return nil
}

func (f *fdcc) maxWindow() float64 {
	return max(f.maxWin*float64(f.info.MaxBDP), float64(f.info.MTU))
}

func (f *fdcc) Start(env Env) {
	f.started = true
	f.win = f.maxWindow()
	f.rate = float64(f.info.LineRate)
	f.lastM = 1
	f.last = env.Now()
	f.reward = math.NaN()
	env.SetRate(rateBps(f.rate))
	env.SetWindow(int64(f.win))
	env.Gauge(fdccSeriesAction, 1)
}

func (f *fdcc) apply(env Env) {
	f.rate = min(f.win*8*float64(Second)/float64(f.info.BaseRTT), float64(f.info.LineRate))
	env.SetRate(rateBps(f.rate))
	env.SetWindow(max(int64(f.win), 1))
}

func (f *fdcc) OnAck(env Env, a *Ack) {
	now := env.Now()
	rtt := now - a.SentAt
	if f.steps > 0 && float64(now-f.last) < f.gate*float64(f.lastRTT) {
		return
	}
	draining, n := f.observe(now, rtt, a)
	for i, v := range f.obs {
		env.Gauge(i, v)
	}
	if f.steps > 0 {
		env.Gauge(fdccSeriesReward, f.reward)
	}
	env.Gauge(fdccSeriesDraining, b2f(draining))
	env.Gauge(fdccSeriesN, n)
	out, ok := f.act(f.obs[:])
	if !ok {
		if f.frozen && !f.logged {
			env.Event(fdccSeriesFrozen, 1)
			f.logged = true
		}
	} else {
		m := multiplier(out, f.alpha, f.alpha)
		if f.compound {
			m *= f.lastM
		}
		f.lastM = m
		f.lastOut = out
		w := min(f.win*m, f.maxWindow())
		if f.floorPkts {
			w = math.Floor(w/float64(f.info.MTU)) * float64(f.info.MTU)
		} else {
			w = math.Floor(w)
		}
		f.win = max(w, float64(f.info.MTU))
		f.apply(env)
		env.Gauge(fdccSeriesAction, m)
	}
	f.record(Step{Flow: f.info.ID, T: now, Obs: f.obs[:], Action: out, Reward: f.reward, Draining: draining, Frozen: !ok})
	f.push(f.obs[:])
	f.steps++
	f.last, f.lastRTT, f.lastSeq = now, rtt, a.Seq
}

// observe fills f.obs and, after the first step, f.reward (the previous
// action's) from the ACK; it returns the phase and the reward's N.
func (f *fdcc) observe(now, rtt Time, a *Ack) (draining bool, n float64) {
	base := float64(f.info.BaseRTT)
	rttN := float64(rtt) / base
	// The most congested hop: the largest SWITCHRATE + QLEN.
	best, bestU := -1, math.Inf(-1)
	var q, sw float64
	hops := a.INT
	if len(hops) > MaxHops {
		hops = hops[:MaxHops]
	}
	for i, h := range hops {
		if h.Rate <= 0 {
			continue
		}
		bdp := float64(h.Rate) / 8 * base / float64(Second)
		qi := float64(h.Qlen) / bdp
		var ri float64
		if i < f.stepN && h.TS > f.stepInt[i].TS {
			ri = float64(h.TxBytes-f.stepInt[i].TxBytes) * 8 / (float64(h.TS-f.stepInt[i].TS) / float64(Second)) / float64(h.Rate)
		}
		if u := qi + ri; u > bestU {
			best, bestU, q, sw = i, u, qi, ri
		}
	}
	n = 1
	if best >= 0 {
		n = float64(max(hops[best].Flows, 1))
	}
	rxRate := float64(f.info.LineRate)
	if len(hops) > 0 && hops[len(hops)-1].Rate > 0 {
		rxRate = float64(hops[len(hops)-1].Rate)
	}
	var good float64
	if dt := now - f.last; dt > 0 && f.steps > 0 {
		good = float64(a.Seq-f.lastSeq) * 8 / (float64(dt) / float64(Second)) / rxRate
	}
	unit := f.derivUnit
	if unit <= 0 {
		unit = f.info.BaseRTT
	}
	var dRTT, dQ float64
	if dt := now - f.last; dt > 0 && f.steps > 0 {
		d := float64(dt) / float64(unit)
		dRTT, dQ = (rttN-f.prevRTT)/d, (q-f.prevQ)/d
	}
	c := f.clip
	f.obs = [fdccObs]float64{
		finite(rttN, c), finite(q, c), finite(sw, c), finite(good, c),
		finite(dRTT, c), finite(dQ, c), finite(f.rate/float64(f.info.LineRate), c), finite(f.lastOut/max(f.limit, 1e-300), c),
	}
	draining = q+sw-1 > f.drain
	if f.steps > 0 {
		switch {
		case draining:
			f.reward = -rttN
		case f.share:
			x := good * n
			f.reward = x + 1/max(rttN, 1e-9) - (x-1)*(x-1)
		default:
			f.reward = good + 1/max(rttN, 1e-9) - (good-1/n)*(good-1/n)
		}
		f.reward = finite(f.reward, 1e6)
	}
	f.prevRTT, f.prevQ = rttN, q
	f.stepN = copy(f.stepInt[:], hops)
	return draining, n
}
