package cc

import "testing"

// scriptEnv is the engine as a test script sees it: a clock the test moves,
// the last rate and window the algorithm set, its armed timers, and what it
// reported.
type scriptEnv struct {
	now      Time
	rate     int64
	window   int64
	timers   map[int]Time
	gauges   map[int]float64
	events   map[int][]float64
	rand     []float64 // values Rand returns in turn (congestion points)
	wall     int64     // WallNanos: advances by wallStep at every read
	wallStep int64
	arms     int // SetTimer calls
	// DrivenEnv: the limit, the last Resend, control packets sent, the echo
	limit  int64
	resend [2]int64
	ctrls  []Ctrl
	echo   int64
}

func newEnv() *scriptEnv {
	return &scriptEnv{timers: map[int]Time{}, gauges: map[int]float64{}, events: map[int][]float64{}}
}

func (e *scriptEnv) Now() Time             { return e.now }
func (e *scriptEnv) SetRate(bps int64)     { e.rate = bps }
func (e *scriptEnv) SetWindow(bytes int64) { e.window = bytes }
func (e *scriptEnv) SetTimer(slot int, at Time) {
	e.timers[slot] = at
	e.arms++
}
func (e *scriptEnv) CancelTimer(slot int)        { delete(e.timers, slot) }
func (e *scriptEnv) Gauge(series int, v float64) { e.gauges[series] = v }
func (e *scriptEnv) Event(series int, v float64) { e.events[series] = append(e.events[series], v) }
func (e *scriptEnv) WallNanos() int64 {
	e.wall += e.wallStep
	return e.wall
}
func (e *scriptEnv) SetLimit(limit int64)  { e.limit = limit }
func (e *scriptEnv) Resend(from, to int64) { e.resend = [2]int64{from, to} }
func (e *scriptEnv) SendCtrl(c Ctrl)       { e.ctrls = append(e.ctrls, c) }
func (e *scriptEnv) Echo(v int64)          { e.echo = v }

func (e *scriptEnv) Rand() float64 {
	if len(e.rand) == 0 {
		return 0
	}
	v := e.rand[0]
	e.rand = e.rand[1:]
	return v
}

// fire moves the clock to timer slot's time and delivers it.
func (e *scriptEnv) fire(t *testing.T, s Sender, slot int) {
	t.Helper()
	at, ok := e.timers[slot]
	if !ok {
		t.Fatalf("timer %d is not armed", slot)
	}
	e.now = at
	delete(e.timers, slot)
	s.(TimerHandler).OnTimer(e, slot)
}

// resolve returns an algorithm's parameters at a line rate, with overrides.
func resolve(t *testing.T, name, preset string, lineRate int64, over map[string]float64) (*Algorithm, Params) {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	p, errs := a.Resolve(preset, over, lineRate)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	return a, p
}

func near(a, b, tol float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= tol
}
