package fdcc

import (
	"fmt"
)

// Policy is a trained actor, for inference. It is read-only: one Policy
// may serve any number of goroutines at once, each with its own Scratch.
type Policy struct {
	arch  Arch
	actor *net
}

// Arch returns the policy's architecture.
func (p *Policy) Arch() Arch { return p.arch }

// Scratch is the memory one caller of Act needs. It belongs to one
// goroutine at a time.
type Scratch struct {
	w    work
	lens [1]int
}

// NewScratch returns scratch memory sized for p, so that Act allocates
// nothing.
func (p *Policy) NewScratch() *Scratch {
	s := &Scratch{}
	s.w.reserve(p.actor, 1)
	return s
}

// Act returns the policy's action, in [−ActLimit, ActLimit], for the
// current observation obs (Obs values) and the history hist of the
// previous observations, oldest first, Obs values a row: the first
// histLen rows are read, histLen in [0, Hist] (hist needs only those
// rows). It allocates nothing and gives bit for bit what a batched
// forward gives for the same sample. It panics on inputs of the wrong
// size.
func (p *Policy) Act(s *Scratch, hist []float64, histLen int, obs []float64) float64 {
	a := p.arch
	if len(obs) != a.Obs || histLen < 0 || histLen > a.Hist || len(hist) < histLen*a.Obs {
		panic(fmt.Sprintf("fdcc: Act: %d observation values and a history of %d rows in %d values; the policy takes %d values and at most %d rows",
			len(obs), histLen, len(hist), a.Obs, a.Hist))
	}
	s.lens[0] = histLen
	return p.actor.forward(&s.w, hist, s.lens[:], obs, nil, 1)[0]
}
