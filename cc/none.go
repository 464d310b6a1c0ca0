package cc

import "fmt"

// none sends at line rate with a fixed window of windowBDPs × max BDP (0: no
// window). It ignores every congestion signal: it is the open-loop baseline the
// MPCC thesis uses to validate the queue model (3 Gbps slope, flat peak).
func noneAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "none",
		Title: "No congestion control",
		Help: "Line rate with a fixed window of windowBDPs × max BDP. No reaction to ECN, INT or delay: " +
			"the open-loop reference that shows what the fabric does on its own.",
		Param: []Param{{
			Name: "windowBDPs", Kind: KindNumber, Unit: "BDP", Default: 1, Min: 0, Max: 1000, Live: true,
			Help: "Window as a multiple of the max BDP (bytes in flight a flow may have unacknowledged); 0 = no window, line rate only.",
		}},
		Presets: []Preset{
			{Name: "nowindow", Help: "No window: every flow sends at line rate until done.", Values: map[string]float64{"windowBDPs": 0}},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			return &noneSender{maxBDP: info.MaxBDP, bdps: p.Get("windowBDPs")}
		},
	}
}

type noneSender struct {
	maxBDP int64
	bdps   float64
}

func (s *noneSender) window() int64 {
	if s.bdps == 0 {
		return Unlimited
	}
	w := int64(s.bdps * float64(s.maxBDP))
	if w < 1 {
		w = 1
	}
	return w
}

func (s *noneSender) Start(env Env) {
	env.SetRate(Unlimited)
	env.SetWindow(s.window())
}

func (s *noneSender) OnAck(Env, *Ack) {}

func (s *noneSender) SetParam(env Env, name string, v float64) error {
	if name != "windowBDPs" {
		return fmt.Errorf("none has no parameter %q", name)
	}
	s.bdps = v
	env.SetWindow(s.window())
	return nil
}
