package fdcc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"cclab/cc/nn"
)

// LSTM-TD3's module names (MLPActor and MLPCritic).
const (
	modPre   = "mem_pre_lstm_layers.0"
	modLSTM  = "mem_lstm_layers.0"
	modAfter = "mem_after_lstm_layers.0"
	modCur   = "cur_feature_layers.0"
	modComb  = "post_combined_layers.0"
	modOut   = "post_combined_layers.2"
)

// net is an actor or a critic.
type net struct {
	arch   Arch
	critic bool
	name   string // "actor", "q1", "q2": the prefix of its parameter names
	curIn  int    // input size of the current branch: Obs, or Obs+1 for a critic

	pre, after, cur, comb, out *nn.Dense
	lstm                       *nn.LSTM
	params                     nn.Params
}

// newNet builds a network with PyTorch's default initialisation, drawing
// from rng in the reference's module order.
func newNet(arch Arch, critic bool, name string, rng *rand.Rand) *net {
	H, O := arch.Hidden, arch.Obs
	n := &net{arch: arch, critic: critic, name: name, curIn: O}
	if critic {
		n.curIn = O + 1
	}
	p := name + "."
	n.pre = nn.NewDense(p+modPre, O, H, rng)
	n.lstm = nn.NewLSTM(p+modLSTM, H, H, rng)
	n.after = nn.NewDense(p+modAfter, H, H, rng)
	n.cur = nn.NewDense(p+modCur, n.curIn, H, rng)
	n.comb = nn.NewDense(p+modComb, 2*H, H, rng)
	n.out = nn.NewDense(p+modOut, H, 1, rng)
	n.collect()
	return n
}

func (n *net) collect() {
	n.params = nil
	n.params = append(n.params, n.pre.Params()...)
	n.params = append(n.params, n.lstm.Params()...)
	n.params = append(n.params, n.after.Params()...)
	n.params = append(n.params, n.cur.Params()...)
	n.params = append(n.params, n.comb.Params()...)
	n.params = append(n.params, n.out.Params()...)
}

// clone returns a deep copy.
func (n *net) clone() *net {
	c := &net{arch: n.arch, critic: n.critic, name: n.name, curIn: n.curIn,
		pre: n.pre.Clone(), lstm: n.lstm.Clone(), after: n.after.Clone(),
		cur: n.cur.Clone(), comb: n.comb.Clone(), out: n.out.Clone()}
	c.collect()
	return c
}

// shadow returns a network that shares n's parameter values (and sees
// every change to them) but has gradients of its own.
func (n *net) shadow() *net {
	p := func(x *nn.Param) *nn.Param {
		return &nn.Param{Name: x.Name, Shape: x.Shape, Value: x.Value, Grad: make([]float64, len(x.Grad))}
	}
	d := func(x *nn.Dense) *nn.Dense { return &nn.Dense{In: x.In, Out: x.Out, W: p(x.W), B: p(x.B)} }
	l := n.lstm
	c := &net{arch: n.arch, critic: n.critic, name: n.name, curIn: n.curIn,
		pre: d(n.pre), after: d(n.after), cur: d(n.cur), comb: d(n.comb), out: d(n.out),
		lstm: &nn.LSTM{In: l.In, Hidden: l.Hidden, WIH: p(l.WIH), WHH: p(l.WHH), BIH: p(l.BIH), BHH: p(l.BHH)}}
	c.collect()
	return c
}

// work holds one network's activations for a batch and its backward
// scratch. It grows on demand and is reused, so a warm work allocates
// nothing.
type work struct {
	rows int // rows reserved

	// The forward's inputs, kept for the backward.
	hist  []float64
	obs   []float64
	lens  []int     // history lengths as run: max(len, 1)
	zero  []float64 // a zero observation: the input of a length-0 history
	empty []bool    // the history had length 0

	pre   []float64 // rows×Hist×H after ReLU
	lc    nn.LSTMCache
	mem   []float64 // rows×H: the LSTM's hidden state at the last valid step
	after []float64 // rows×H after ReLU
	curIn []float64 // rows×(Obs+1): a critic's (obs, action)
	cur   []float64 // rows×H after ReLU
	cat   []float64 // rows×2H: [after, cur]
	comb  []float64 // rows×H after ReLU
	out   []float64 // rows: the last FC's output
	th    []float64 // rows: tanh(out) (actor)
	y     []float64 // rows: the network's output

	dout, dcomb, dcat, dafter, dcur, dmem, dpre, dcurIn []float64
	// preReg, when not 0, adds preReg × u to the gradient of an actor's
	// pre-tanh output u (TD3Config.PreActPenalty's term).
	preReg float64
	// Input gradients, when asked for: rows×Hist×Obs, rows×Obs, rows.
	dhist, dobs, dact []float64
}

func growf(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// reserve sizes w for rows rows of n.
func (w *work) reserve(n *net, rows int) {
	a := n.arch
	H, T, O := a.Hidden, a.Hist, a.Obs
	if cap(w.lens) < rows {
		w.lens = make([]int, rows)
		w.empty = make([]bool, rows)
	}
	w.lens, w.empty = w.lens[:rows], w.empty[:rows]
	if len(w.zero) != O {
		w.zero = make([]float64, O)
	}
	w.pre = growf(w.pre, rows*T*H)
	w.mem = growf(w.mem, rows*H)
	w.after = growf(w.after, rows*H)
	w.curIn = growf(w.curIn, rows*(O+1))
	w.cur = growf(w.cur, rows*H)
	w.cat = growf(w.cat, rows*2*H)
	w.comb = growf(w.comb, rows*H)
	w.out = growf(w.out, rows)
	w.th = growf(w.th, rows)
	w.y = growf(w.y, rows)
	w.rows = rows
}

func (w *work) reserveBackward(n *net, rows int) {
	a := n.arch
	H, T, O := a.Hidden, a.Hist, a.Obs
	w.dout = growf(w.dout, rows)
	w.dcomb = growf(w.dcomb, rows*H)
	w.dcat = growf(w.dcat, rows*2*H)
	w.dafter = growf(w.dafter, rows*H)
	w.dcur = growf(w.dcur, rows*H)
	w.dmem = growf(w.dmem, rows*H)
	w.dpre = growf(w.dpre, rows*T*H)
	w.dcurIn = growf(w.dcurIn, rows*(O+1))
	w.dhist = growf(w.dhist, rows*T*O)
	w.dobs = growf(w.dobs, rows*O)
	w.dact = growf(w.dact, rows)
}

// forward runs the network on rows samples: hist holds rows×Hist×Obs
// values (sample s's first histLen[s] rows valid; for a single sample,
// only those rows need be present), obs rows×Obs, act rows actions (a
// critic's only). It returns the rows outputs, which live in w.
func (n *net) forward(w *work, hist []float64, histLen []int, obs, act []float64, rows int) []float64 {
	a := n.arch
	H, T, O := a.Hidden, a.Hist, a.Obs
	w.reserve(n, rows)
	w.hist, w.obs = hist, obs

	// Memory branch.
	for s := range rows {
		L := histLen[s]
		if L < 0 || L > T {
			panic(fmt.Sprintf("fdcc: history length %d of sample %d is not in [0, %d]", L, s, T))
		}
		pre := w.pre[s*T*H:]
		w.empty[s] = L == 0
		if L == 0 {
			w.lens[s] = 1
			n.pre.Forward(pre, w.zero, 1)
		} else {
			w.lens[s] = L
			n.pre.Forward(pre, hist[s*T*O:], L)
		}
		nn.ReLU(pre[:w.lens[s]*H], pre[:w.lens[s]*H])
	}
	n.lstm.Forward(&w.lc, w.mem, w.pre, w.lens, rows, T)
	n.after.Forward(w.after, w.mem, rows)
	nn.ReLU(w.after[:rows*H], w.after[:rows*H])

	// Current branch.
	in := obs
	if n.critic {
		for s := range rows {
			copy(w.curIn[s*(O+1):], obs[s*O:(s+1)*O])
			w.curIn[s*(O+1)+O] = act[s]
		}
		in = w.curIn
	}
	n.cur.Forward(w.cur, in, rows)
	nn.ReLU(w.cur[:rows*H], w.cur[:rows*H])

	// Combined.
	for s := range rows {
		copy(w.cat[2*s*H:], w.after[s*H:(s+1)*H])
		copy(w.cat[(2*s+1)*H:], w.cur[s*H:(s+1)*H])
	}
	n.comb.Forward(w.comb, w.cat, rows)
	nn.ReLU(w.comb[:rows*H], w.comb[:rows*H])
	n.out.Forward(w.out, w.comb, rows)
	if n.critic {
		copy(w.y, w.out[:rows])
	} else {
		for s := range rows {
			w.th[s] = math.Tanh(w.out[s])
			w.y[s] = a.ActLimit * w.th[s]
		}
	}
	return w.y[:rows]
}

// backward takes dy, the loss gradient with respect to the outputs of the
// last forward on w, and adds the parameters' gradients into their Grad.
// With inputs it also writes the input gradients into w.dhist (zero at
// rows past a history's length, and for a length of 0), w.dobs and, for a
// critic, w.dact.
func (n *net) backward(w *work, dy []float64, rows int, inputs bool) {
	a := n.arch
	H, T, O := a.Hidden, a.Hist, a.Obs
	w.reserveBackward(n, rows)
	n.headBackward(w, dy, rows, true)

	var dcurIn []float64
	if inputs {
		dcurIn = w.dcurIn
	}
	if n.critic {
		n.cur.Backward(dcurIn, w.dcur, w.curIn, rows)
	} else {
		n.cur.Backward(dcurIn, w.dcur, w.obs, rows)
	}
	if inputs {
		for s := range rows {
			if n.critic {
				copy(w.dobs[s*O:(s+1)*O], w.dcurIn[s*(O+1):])
				w.dact[s] = w.dcurIn[s*(O+1)+O]
			} else {
				copy(w.dobs[s*O:(s+1)*O], w.dcurIn[s*O:])
			}
		}
	}

	n.after.Backward(w.dmem, w.dafter, w.mem, rows)
	n.lstm.Backward(&w.lc, w.dpre, w.dmem, w.pre, w.lens, rows, T)
	for s := range rows {
		L := w.lens[s]
		pre := w.pre[s*T*H : (s*T+L)*H]
		dpre := w.dpre[s*T*H : (s*T+L)*H]
		nn.ReLUBackward(dpre, dpre, pre)
		var dh []float64
		if inputs {
			dh = w.dhist[s*T*O : (s+1)*T*O]
			clear(dh)
		}
		if w.empty[s] {
			n.pre.Backward(nil, dpre, w.zero, 1)
		} else {
			n.pre.Backward(dh, dpre, w.hist[s*T*O:], L)
		}
	}
}

// headBackward runs the backward from the output to the two branches'
// outputs: w.dafter and w.dcur, after their ReLUs. With params it adds the
// head's parameter gradients; without, it only propagates.
func (n *net) headBackward(w *work, dy []float64, rows int, params bool) {
	H := n.arch.Hidden
	for s := range rows {
		if n.critic {
			w.dout[s] = dy[s]
		} else {
			w.dout[s] = dy[s]*n.arch.ActLimit*(1-w.th[s]*w.th[s]) + w.preReg*w.out[s]
		}
	}
	if params {
		n.out.Backward(w.dcomb, w.dout, w.comb, rows)
	} else {
		n.out.BackwardInput(w.dcomb, w.dout, rows)
	}
	nn.ReLUBackward(w.dcomb[:rows*H], w.dcomb[:rows*H], w.comb[:rows*H])
	if params {
		n.comb.Backward(w.dcat, w.dcomb, w.cat, rows)
	} else {
		n.comb.BackwardInput(w.dcat, w.dcomb, rows)
	}
	for s := range rows {
		copy(w.dafter[s*H:(s+1)*H], w.dcat[2*s*H:])
		copy(w.dcur[s*H:(s+1)*H], w.dcat[(2*s+1)*H:])
	}
	nn.ReLUBackward(w.dafter[:rows*H], w.dafter[:rows*H], w.after[:rows*H])
	nn.ReLUBackward(w.dcur[:rows*H], w.dcur[:rows*H], w.cur[:rows*H])
}

// actionGrad writes into w.dact the gradient of Σ dy·Q with respect to
// the action of the last forward of a critic on w, without touching any
// parameter gradient (the actor's loss needs only this).
func (n *net) actionGrad(w *work, dy []float64, rows int) {
	O := n.arch.Obs
	w.reserveBackward(n, rows)
	n.headBackward(w, dy, rows, false)
	n.cur.BackwardInput(w.dcurIn, w.dcur, rows)
	for s := range rows {
		w.dact[s] = w.dcurIn[s*(O+1)+O]
	}
}
