package sim

import "cclab/cc"

// PrioTest configures PrioAlgo, the test sender that chooses each packet's
// data class (cc.DataClasser): it paces its flow at Rate[flow] (absent: line
// rate), has no window unless Window > 0, ignores every congestion signal,
// and counts the ECN-marked data packets its ACKs report in Marked[flow]
// (Marked must be long enough for every flow id).
type PrioTest struct {
	Class  func(flow int32, seq int64) int // nil: class 0
	Rate   map[int32]int64
	Window int64
	Marked []int
}

// PrioAlgo is "none" with a sender that picks data classes as pt says.
func PrioAlgo(pt *PrioTest) AlgoSpec {
	base, _ := cc.Lookup("none")
	a := *base
	a.Name = "prio-test"
	a.NewSender = func(info cc.FlowInfo, _ cc.Params) cc.Sender { return &prioSender{id: info.ID, pt: pt} }
	p, _ := base.Resolve("", map[string]float64{"windowBDPs": 0}, 0)
	return AlgoSpec{Algo: &a, Params: p}
}

type prioSender struct {
	id int32
	pt *PrioTest
}

func (s *prioSender) Start(env cc.Env) {
	r, ok := s.pt.Rate[s.id]
	if !ok {
		r = cc.Unlimited
	}
	env.SetRate(r)
	if s.pt.Window > 0 {
		env.SetWindow(s.pt.Window)
	} else {
		env.SetWindow(cc.Unlimited)
	}
}

func (s *prioSender) OnAck(_ cc.Env, a *cc.Ack) {
	if int(s.id) < len(s.pt.Marked) {
		s.pt.Marked[s.id] += a.ECNMarked
	}
}

func (s *prioSender) SetParam(cc.Env, string, float64) error { return nil }

func (s *prioSender) DataClass(_ cc.Env, seq int64) int {
	if s.pt.Class == nil {
		return 0
	}
	return s.pt.Class(s.id, seq)
}
