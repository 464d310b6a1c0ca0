package cc

import nets "cclab/cc/fdcc"

// NetPolicy adapts a trained LSTM-TD3 actor (package cc/fdcc) to the
// learned senders' Policy.
type NetPolicy struct{ P *nets.Policy }

// Shape is the actor's observation size and history length.
func (n NetPolicy) Shape() (obs, hist int) { return n.P.Arch().Obs, n.P.Arch().Hist }

// Limit is the actor's output bound.
func (n NetPolicy) Limit() float64 { return n.P.Arch().ActLimit }

// NewActor gives one flow its own scratch memory.
func (n NetPolicy) NewActor() Actor { return &netActor{p: n.P, s: n.P.NewScratch()} }

type netActor struct {
	p *nets.Policy
	s *nets.Scratch
}

func (a *netActor) Act(hist []float64, histLen int, obs []float64) float64 {
	return a.p.Act(a.s, hist, histLen, obs)
}

// shippedPolicy is the registry's policy for a learned algorithm: the one
// the lab ships (package cc/fdcc embeds it). A shipped file that does not
// load leaves the algorithm without a policy (its flows keep their initial
// window and rate); the cc/fdcc tests load every shipped file.
func shippedPolicy(algo string) Learned {
	p, _, err := nets.Shipped(algo)
	if err != nil || p == nil {
		return Learned{}
	}
	return Learned{Policy: NetPolicy{P: p}}
}
