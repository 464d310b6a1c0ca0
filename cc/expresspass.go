package cc

// ExpressPass (Cho, Jang, Han, SIGCOMM 2017), with the defaults of its
// paper and its ns-2 code (kaist-ina/ns2-xpass): the sender asks its
// receiver for credits; the receiver paces credits to the sender, each of
// which lets one data packet go; every egress port lets credits use only
// the share of its link that the data they release fills (credit / (credit
// + data packet), 5.18% with its 84 B credits and 1538 B frames) and drops
// the excess from a small credit queue; the receiver adjusts each flow's
// credit rate once per update period from the credits lost on the way
// (Algorithm 1: aim at a target loss, weight w halved on loss, moved
// half-way to w_max on a second increase in a row).
//
// Choices the paper and its code leave open, and what the lab does:
//   - Algorithm 1 as the paper writes it (fixed target loss, w ← (w +
//     w_max)/2); the ns-2 code uses a target that shrinks near the maximum
//     rate, (1 − rate/max)·0.125, adds 0.05 to w, and on loss sets the rate
//     from the measured credit rate instead.
//   - The update period is the flow's base RTT (credits keep queues near
//     empty); the code keeps an EWMA of the credit-to-data delay.
//   - Credit loss is counted as the code does (data echoes the number of
//     the credit it used; gaps count as lost credits), over the credits
//     sent since the last update only (the loss of credits sent at the
//     old rate, which shows an RTT later, would otherwise cut the new rate
//     again), once half a period's worth of them is accounted for.
//   - Credits are 48 B, the lab's minimum frame (the paper's 84 B is the
//     64 B Ethernet minimum plus preamble and gap, which the lab's framing
//     does not count), so credits may use 48 / (48 + a full data packet) of
//     each link; the credit queue holds 8 credits with a bucket of 2
//     (the paper's evaluation script).
//   - A receiver that hears nothing from a flow for retransmitTimeout while
//     it sends credits, or after the sender stopped them with data
//     missing, asks for the first missing range again; retransmissions use
//     credits like new data (the code NACKs and goes back N).
const (
	xpRequest uint8 = 1 // sender → receiver: send credits (Value: size, Aux: base RTT ns | packet wire bytes << 32)
	xpStop    uint8 = 2 // sender → receiver: stop credits
	xpCredit  uint8 = 3 // receiver → sender: one credit (Value: its number)
	xpResend  uint8 = 4 // receiver → sender: send [Value, Aux) again
)

// ExpressPass' series ids.
const (
	xpSerRate = iota
	xpSerLoss
	xpSerCredits
	xpSerW
)

func expressPassAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "expresspass",
		Title: "ExpressPass (receiver credits)",
		Help: "Credit-scheduled, delay-bounded transport (Cho et al., SIGCOMM 2017): receivers pace credits, every switch " +
			"throttles credits to the share of its link that their data fills and drops the excess, and each data packet " +
			"needs one credit, so data queues stay a few packets deep.",
		Param: []Param{
			rateParam("linkRate", 100000, "The receiver's link rate, which sets the maximum credit rate (defaults to the host link rate)."),
			{Name: "creditBytes", Kind: KindBytes, Unit: "B", Default: 48, Min: 1, Max: 1500,
				Help: "A credit's (and a credit request's or stop's) bytes on the wire: the lab's minimum frame (the paper's 84 B counts preamble and gap)."},
			fracParam("alpha", 0.5, "α: a flow's first credit rate as a fraction of the maximum (paper and code: 1/2)."),
			fracParam("wInit", 1.0/16, "w_init: the first aggressiveness weight (paper: 1/16)."),
			fracParam("wMin", 0.01, "w_min: the smallest weight (paper: 0.01)."),
			fracParam("wMax", 0.5, "w_max: the largest weight (paper: 0.5)."),
			fracParam("targetLoss", 0.1, "The credit loss the feedback aims at (paper: 10%)."),
			{Name: "jitter", Kind: KindNumber, Default: 0.1, Min: 0, Max: 0.9, Live: true,
				Help: "Credit spacing varies uniformly by ± this fraction (code: 0.1), so that credits of different flows do not stay in lock-step."},
			{Name: "retransmitTimeout", Kind: KindTime, Unit: "us", Default: 100, Min: 1, Max: 1e7, Live: true,
				Help: "A receiver that has heard nothing from a flow for this long asks for the missing data again; a sender re-sends its credit request as often until credits come (the code's evaluation: 100 µs)."},
		},
		Presets: []Preset{
			{Name: "expresspass_code", Help: "The ns-2 code's defaults where they differ from the paper's: w_init 0.5.",
				Values: map[string]float64{"wInit": 0.5}},
			{Name: "expresspass_aggressive", Help: "Faster ramp: first rate at the maximum, w_init 0.5.",
				Values: map[string]float64{"alpha": 1, "wInit": 0.5}},
		},
		ReceiverDriven: true,
		Credit:         &CreditSpec{Wire: 48, Queue: 8, Bucket: 2},
		Series: []SeriesSpec{
			{Name: "xpass_credit_rate", Unit: "", Help: "The flow's credit rate as a fraction of the maximum (the link's credit share)."},
			{Name: "xpass_credit_loss", Unit: "", Help: "Credits lost over the last update period, as a fraction of those the data accounted for (an event per update)."},
			{Name: "xpass_credits", Unit: "", Help: "Credits the receiver has sent for the flow."},
			{Name: "xpass_w", Unit: "", Help: "The feedback's aggressiveness weight w."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			return &xpSender{info: info, p: p}
		},
		NewReceiver: func(p Params) Receiver {
			return &xpReceiver{p: p, flows: map[int32]*xpFlow{}}
		},
	}
}

type xpSender struct {
	info    FlowInfo
	p       Params
	denv    DrivenEnv
	limit   int64 // new data credits have let go
	sent    int64 // new data sent
	credits fifo  // numbers of credits received and not yet used, oldest first
	rtxFrom int64 // a range the receiver asked for again
	rtxTo   int64
	got     bool // a credit has come
	stopped bool
}

func (s *xpSender) ctrl(kind uint8, value, aux int64) Ctrl {
	return Ctrl{Flow: s.info.ID, Kind: kind, Value: value, Aux: aux, Wire: int64(s.p.Get("creditBytes")), Class: CtrlHigh}
}

func (s *xpSender) request(env Env) {
	aux := int64(s.info.BaseRTT/Nanosecond) | (s.info.MTU+s.info.Header)<<32
	s.denv.SendCtrl(s.ctrl(xpRequest, s.info.Size, aux))
	env.SetTimer(0, env.Now()+Time(s.p.Get("retransmitTimeout")*float64(Microsecond)))
}

func (s *xpSender) Start(env Env) {
	env.SetRate(Unlimited)
	env.SetWindow(Unlimited)
	d, ok := env.(DrivenEnv)
	if !ok {
		return
	}
	s.denv = d
	d.SetLimit(0)
	s.request(env)
}

func (s *xpSender) OnTimer(env Env, slot int) {
	if s.denv != nil && !s.got {
		s.request(env) // the request (or every credit) was lost
	}
}

func (s *xpSender) OnCtrl(env Env, c *Ctrl) {
	if s.denv == nil {
		return
	}
	switch c.Kind {
	case xpCredit:
		s.got = true
		mtu := s.info.MTU
		switch {
		case s.rtxFrom < s.rtxTo:
			s.denv.Resend(s.rtxFrom, min(s.rtxFrom+mtu, s.rtxTo))
			s.rtxFrom += mtu
		case s.limit < s.info.Size:
			s.limit += mtu
			s.denv.SetLimit(s.limit)
		default:
			// nothing to send: the credit is wasted
			if !s.stopped {
				s.stopped = true
				s.denv.SendCtrl(s.ctrl(xpStop, 0, 0))
			}
			return
		}
		if s.credits.n == 0 {
			s.denv.Echo(c.Value)
		}
		s.credits.push(c.Value)
	case xpResend:
		s.rtxFrom, s.rtxTo = c.Value/s.info.MTU*s.info.MTU, min(c.Aux, s.sent)
		s.stopped = false
	}
}

// OnSend consumes the oldest credit; the next packet echoes the next one.
func (s *xpSender) OnSend(env Env, payload, wire int64, retransmit bool) {
	if !retransmit {
		s.sent += payload
	}
	if s.credits.n > 0 {
		s.credits.pop()
		if s.credits.n > 0 {
			s.denv.Echo(s.credits.peek())
		}
	}
	if s.sent >= s.info.Size && s.rtxFrom >= s.rtxTo && !s.stopped {
		s.stopped = true
		s.denv.SendCtrl(s.ctrl(xpStop, 0, 0))
	}
}

func (s *xpSender) OnAck(env Env, a *Ack) {}

func (s *xpSender) SetParam(env Env, name string, v float64) error {
	s.p = s.p.Clone()
	s.p[name] = v
	return nil
}

// fifo is a growable ring of int64: no allocation once it has grown.
type fifo struct {
	buf     []int64
	head, n int
}

func (q *fifo) push(v int64) {
	if q.n == len(q.buf) {
		buf := make([]int64, max(2*len(q.buf), 8))
		for i := 0; i < q.n; i++ {
			buf[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
}

func (q *fifo) pop() int64 {
	v := q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return v
}

func (q *fifo) peek() int64 { return q.buf[q.head] }

// xpFlow is a receiver's state of one flow it sends credits to.
type xpFlow struct {
	id         int32
	size       int64
	rtt        Time
	gapMax     float64 // ps between credits at the maximum rate
	rate       float64 // fraction of the maximum credit rate
	w          float64
	increasing bool
	sending    bool
	nextAt     Time
	seq        int64 // credits sent
	expect     int64 // the credit number the next data should echo
	mark       int64 // the first credit sent at the current rate
	total      int64 // credits accounted for in this period
	dropped    int64
	lastUpdate Time
	lastRx     Time
	lastCredit Time
	rng        uint64
}

type xpReceiver struct {
	p     Params
	flows map[int32]*xpFlow
	order []*xpFlow // flows in the order they asked, for a deterministic walk
	armed [2]bool
}

func (r *xpReceiver) OnCtrl(env ReceiverEnv, c *Ctrl) {
	now := env.Now()
	f := r.flows[c.Flow]
	switch c.Kind {
	case xpRequest:
		if f == nil {
			rtt := Time(c.Aux&(1<<32-1)) * Nanosecond
			wire := c.Aux >> 32
			credit := int64(r.p.Get("creditBytes"))
			bps := r.p.Get("linkRate") * 1e6
			f = &xpFlow{id: c.Flow, size: c.Value, rtt: max(rtt, Microsecond),
				gapMax: float64((credit+wire)*8) * float64(Second) / bps,
				rate:   r.p.Get("alpha"), w: r.p.Get("wInit"), lastUpdate: now, lastRx: now,
				rng: uint64(c.Flow+1) * 0x9e3779b97f4a7c15}
			r.flows[c.Flow] = f
			r.order = append(r.order, f)
		}
		if !f.sending {
			f.sending = true
			f.nextAt = now
		}
		r.schedule(env)
		r.armLoss(env)
	case xpStop:
		if f != nil {
			f.sending = false
		}
	}
}

func (r *xpReceiver) OnData(env ReceiverEnv, d *DataInfo) int64 {
	f := r.flows[d.Flow]
	if f == nil {
		return 0
	}
	f.lastRx = d.Now
	// credits the data skipped were lost; only credits sent at the
	// current rate count, so that one overload is not answered twice
	if e := d.Echo; e >= f.expect {
		if from := max(f.expect, f.mark); e >= from {
			f.total += e - from + 1
			f.dropped += e - from
		}
		f.expect = e + 1
	}
	return 0
}

func (r *xpReceiver) OnComplete(env ReceiverEnv, flow int32) {
	f := r.flows[flow]
	if f == nil {
		return
	}
	delete(r.flows, flow)
	for i, g := range r.order {
		if g == f {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
}

// update is Algorithm 1, once per update period.
func (r *xpReceiver) update(env ReceiverEnv, f *xpFlow) {
	// wait until the credits accounted for are half a period's worth at
	// the current rate, so that one lost credit among the first two
	// echoed does not read as 50% loss
	if f.total == 0 || float64(f.total) < 0.5*float64(f.rtt)*f.rate/f.gapMax {
		return
	}
	loss := float64(f.dropped) / float64(f.total)
	target := r.p.Get("targetLoss")
	if loss <= target {
		if f.increasing {
			f.w = (f.w + r.p.Get("wMax")) / 2
		}
		f.increasing = true
		f.rate = (1-f.w)*f.rate + f.w*(1+target)
	} else {
		f.rate = f.rate * (1 - loss) * (1 + target)
		f.w = max(f.w/2, r.p.Get("wMin"))
		f.increasing = false
	}
	// at least one credit per update period
	f.rate = max(f.rate, f.gapMax/float64(f.rtt))
	f.total, f.dropped = 0, 0
	f.mark = f.seq
	f.lastUpdate = env.Now()
	env.Event(f.id, xpSerLoss, loss)
	env.Gauge(f.id, xpSerRate, f.rate)
	env.Gauge(f.id, xpSerW, f.w)
}

// OnTimer: slot 0 paces credits, slot 1 looks for lost data.
func (r *xpReceiver) OnTimer(env ReceiverEnv, slot int) {
	r.armed[slot] = false
	d, ok := env.(DrivenReceiverEnv)
	if !ok {
		return
	}
	now := env.Now()
	if slot == 1 {
		to := Time(r.p.Get("retransmitTimeout") * float64(Microsecond))
		for _, f := range r.order {
			quiet := now-f.lastRx >= to && (!f.sending || f.lastCredit-f.lastRx >= to)
			if !quiet {
				continue
			}
			from, upto := d.FirstGap(f.id)
			if upto <= from {
				upto = f.size
			}
			f.lastRx = now
			d.SendCtrl(Ctrl{Flow: f.id, Kind: xpResend, Value: from, Aux: upto, Wire: int64(r.p.Get("creditBytes")), Class: CtrlHigh})
			if !f.sending {
				f.sending = true
				f.nextAt = now
			}
		}
		r.schedule(env)
		r.armLoss(env)
		return
	}
	jitter := r.p.Get("jitter")
	credit := int64(r.p.Get("creditBytes"))
	for _, f := range r.order {
		if !f.sending || f.nextAt > now {
			continue
		}
		if now-f.lastUpdate >= f.rtt {
			r.update(env, f)
		}
		d.SendCtrl(Ctrl{Flow: f.id, Kind: xpCredit, Value: f.seq, Wire: credit, Credit: true})
		f.seq++
		f.lastCredit = now
		env.Gauge(f.id, xpSerCredits, float64(f.seq))
		// xorshift64: a per-flow stream, so the jitter is reproducible
		f.rng ^= f.rng << 13
		f.rng ^= f.rng >> 7
		f.rng ^= f.rng << 17
		u := float64(f.rng>>11)/(1<<53)*2 - 1
		f.nextAt = now + Time(f.gapMax/f.rate*(1+jitter*u))
	}
	r.schedule(env)
}

// schedule arms the pacing timer for the earliest credit due.
func (r *xpReceiver) schedule(env ReceiverEnv) {
	next := Time(-1)
	for _, f := range r.order {
		if f.sending && (next < 0 || f.nextAt < next) {
			next = f.nextAt
		}
	}
	if next >= 0 {
		env.SetTimer(0, max(next, env.Now()))
		r.armed[0] = true
	}
}

func (r *xpReceiver) armLoss(env ReceiverEnv) {
	if !r.armed[1] && len(r.order) > 0 {
		r.armed[1] = true
		env.SetTimer(1, env.Now()+Time(r.p.Get("retransmitTimeout")*float64(Microsecond)))
	}
}

func (r *xpReceiver) SetParam(name string, v float64) error {
	r.p = r.p.Clone()
	r.p[name] = v
	return nil
}
