package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LSTM is a single-layer LSTM with PyTorch's parameterisation, so a
// PyTorch nn.LSTM(In, Hidden, batch_first=True) state_dict maps onto it
// one to one: weight_ih_l0 [4H×In], weight_hh_l0 [4H×H], bias_ih_l0 [4H]
// and bias_hh_l0 [4H], the gate rows in PyTorch's order i, f, g, o:
//
//	i = σ(W_ii x + b_ii + W_hi h + b_hi)      f = σ(W_if x + b_if + W_hf h + b_hf)
//	g = tanh(W_ig x + b_ig + W_hg h + b_hg)   o = σ(W_io x + b_io + W_ho h + b_ho)
//	c' = f⊙c + i⊙g                            h' = o⊙tanh(c')
//
// Every sequence starts from h = c = 0. The layer returns one vector per
// sequence: the hidden state at its last valid step (the index
// LSTM-TD3 takes with torch.gather on the history length). Sequences are
// zero-padded to a common number of steps T and have lengths in [0, T];
// steps at or past a sequence's length are never read. A sequence of
// length 0 returns the zero vector (its initial hidden state).
type LSTM struct {
	In, Hidden int
	WIH, WHH   *Param // weight_ih_l0, weight_hh_l0
	BIH, BHH   *Param // bias_ih_l0, bias_hh_l0
}

// NewLSTM returns a layer with PyTorch's default initialisation: every
// parameter drawn from U(−1/√Hidden, 1/√Hidden), in the order weight_ih,
// weight_hh, bias_ih, bias_hh. The parameters are named
// "<name>.weight_ih_l0" and so on.
func NewLSTM(name string, in, hidden int, rng *rand.Rand) *LSTM {
	if in <= 0 || hidden <= 0 {
		panic(fmt.Sprintf("nn: NewLSTM %s: sizes in %d hidden %d", name, in, hidden))
	}
	l := &LSTM{
		In: in, Hidden: hidden,
		WIH: NewParam(name+".weight_ih_l0", 4*hidden, in),
		WHH: NewParam(name+".weight_hh_l0", 4*hidden, hidden),
		BIH: NewParam(name+".bias_ih_l0", 4*hidden),
		BHH: NewParam(name+".bias_hh_l0", 4*hidden),
	}
	bound := 1 / math.Sqrt(float64(hidden))
	for _, p := range l.Params() {
		p.uniform(rng, bound)
	}
	return l
}

// Params returns the layer's parameters in PyTorch's order: weight_ih,
// weight_hh, bias_ih, bias_hh.
func (l *LSTM) Params() Params { return Params{l.WIH, l.WHH, l.BIH, l.BHH} }

// Clone returns a deep copy of the layer.
func (l *LSTM) Clone() *LSTM {
	return &LSTM{In: l.In, Hidden: l.Hidden, WIH: l.WIH.Clone(), WHH: l.WHH.Clone(), BIH: l.BIH.Clone(), BHH: l.BHH.Clone()}
}

// LSTMCache holds what Forward computes at every step, for Backward, and
// Backward's scratch. Its zero value is ready; it grows on demand and is
// reused across calls, so a warm cache allocates nothing. One cache serves
// one forward/backward at a time.
type LSTMCache struct {
	gates []float64 // n×T×4H: i, f, g, o after their nonlinearity
	c     []float64 // n×T×H cell states
	h     []float64 // n×T×H hidden states
	tc    []float64 // n×T×H tanh(c)
	da    []float64 // 4H
	dh    []float64 // H
	dc    []float64 // H
	dhp   []float64 // H
}

func (c *LSTMCache) reserve(n, steps, hidden int) {
	c.gates = grow(c.gates, n*steps*4*hidden)
	c.c = grow(c.c, n*steps*hidden)
	c.h = grow(c.h, n*steps*hidden)
	c.tc = grow(c.tc, n*steps*hidden)
	c.da = grow(c.da, 4*hidden)
	c.dh = grow(c.dh, hidden)
	c.dc = grow(c.dc, hidden)
	c.dhp = grow(c.dhp, hidden)
}

// checkLens panics on a length outside [0, steps].
func checkLens(lens []int, n, steps int) {
	for i, L := range lens[:n] {
		if L < 0 || L > steps {
			panic(fmt.Sprintf("nn: LSTM: sequence %d has length %d, not in [0, %d]", i, L, steps))
		}
	}
}

// Forward runs n sequences of steps steps: x holds n×steps×In values,
// lens[i] is sequence i's length. It writes each sequence's hidden state
// at its last valid step into out (n×Hidden values; zero for a length of
// 0) and keeps what Backward needs in c.
func (l *LSTM) Forward(c *LSTMCache, out, x []float64, lens []int, n, steps int) {
	checkLens(lens, n, steps)
	H, In := l.Hidden, l.In
	c.reserve(n, steps, H)
	wih, whh, bih, bhh := l.WIH.Value, l.WHH.Value, l.BIH.Value, l.BHH.Value
	for s := range n {
		outS := out[s*H : (s+1)*H]
		L := lens[s]
		if L == 0 {
			clear(outS)
			continue
		}
		for t := range L {
			k := s*steps + t
			xt := x[k*In : (k+1)*In]
			g := c.gates[k*4*H : (k+1)*4*H]
			for r := range g {
				g[r] = bih[r] + bhh[r]
			}
			gemvAdd(g, wih, xt, 4*H, In)
			if t > 0 {
				gemvAdd(g, whh, c.h[(k-1)*H:k*H], 4*H, H)
			}
			ct := c.c[k*H : (k+1)*H]
			ht := c.h[k*H : (k+1)*H]
			tct := c.tc[k*H : (k+1)*H]
			for j := range H {
				ig := sigmoid(g[j])
				fg := sigmoid(g[H+j])
				gg := math.Tanh(g[2*H+j])
				og := sigmoid(g[3*H+j])
				g[j], g[H+j], g[2*H+j], g[3*H+j] = ig, fg, gg, og
				cv := ig * gg
				if t > 0 {
					cv += fg * c.c[(k-1)*H+j]
				}
				ct[j] = cv
				tct[j] = math.Tanh(cv)
				ht[j] = og * tct[j]
			}
		}
		copy(outS, c.h[(s*steps+L-1)*H:(s*steps+L)*H])
	}
}

// Backward is back-propagation through time for the last Forward on c
// (same x, lens, n and steps): dout holds the loss gradient with respect
// to out. It adds the parameters' gradients into their Grad and, when dx
// is not nil, writes the gradient with respect to x into dx (n×steps×In
// values, overwritten; zero at padded steps).
func (l *LSTM) Backward(c *LSTMCache, dx, dout, x []float64, lens []int, n, steps int) {
	checkLens(lens, n, steps)
	H, In := l.Hidden, l.In
	wih, whh := l.WIH.Value, l.WHH.Value
	gwih, gwhh, gbih, gbhh := l.WIH.Grad, l.WHH.Grad, l.BIH.Grad, l.BHH.Grad
	da, dh, dc, dhp := c.da, c.dh, c.dc, c.dhp
	for s := range n {
		L := lens[s]
		if dx != nil {
			clear(dx[(s*steps+L)*In : (s+1)*steps*In])
		}
		if L == 0 {
			continue
		}
		copy(dh, dout[s*H:(s+1)*H])
		clear(dc)
		for t := L - 1; t >= 0; t-- {
			k := s*steps + t
			g := c.gates[k*4*H : (k+1)*4*H]
			tct := c.tc[k*H : (k+1)*H]
			for j := range H {
				ig, fg, gg, og := g[j], g[H+j], g[2*H+j], g[3*H+j]
				tcj := tct[j]
				dcj := dc[j] + dh[j]*og*(1-tcj*tcj)
				cprev := 0.0
				if t > 0 {
					cprev = c.c[(k-1)*H+j]
				}
				da[j] = dcj * gg * ig * (1 - ig)
				da[H+j] = dcj * cprev * fg * (1 - fg)
				da[2*H+j] = dcj * ig * (1 - gg*gg)
				da[3*H+j] = dh[j] * tcj * og * (1 - og)
				dc[j] = dcj * fg
			}
			xt := x[k*In : (k+1)*In]
			var hprev []float64
			if t > 0 {
				hprev = c.h[(k-1)*H : k*H]
			}
			for r, a := range da {
				gbih[r] += a
				gbhh[r] += a
			}
			gerAdd(gwih, 4*H, In, da, xt)
			if t > 0 {
				gerAdd(gwhh, 4*H, H, da, hprev)
			}
			if dx != nil {
				dxt := dx[k*In : (k+1)*In]
				clear(dxt)
				gemvTAdd(dxt, wih, da, 4*H, In)
			}
			if t > 0 {
				clear(dhp)
				gemvTAdd(dhp, whh, da, 4*H, H)
				dh, dhp = dhp, dh
			}
		}
	}
	c.dh, c.dhp = dh, dhp
}
