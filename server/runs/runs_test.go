package runs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"cclab/sim"
	"cclab/store"
)

// incast is a small run: four 100 KB flows into one port, about 40 µs.
const incast = `{"name": "incast-4", "seed": 1,
 "topology": {"kind": "dumbbell", "senders": 4, "hostLink": {"rate": "100Gbps", "delay": "1us"}},
 "cc": {"algorithm": "dcqcn"},
 "workload": [{"kind": "incast", "senders": ["h0", "h1", "h2", "h3"], "receiver": "r0", "size": "100KB", "start": "0s"}]}`

// long runs until cancelled: a Poisson workload for a simulated second.
const long = `{"name": "long", "seed": 1, "duration": "1s",
 "topology": {"kind": "dumbbell", "senders": 4, "hostLink": {"rate": "100Gbps", "delay": "1us"}},
 "cc": {"algorithm": "dcqcn"},
 "workload": [{"kind": "poisson", "load": 0.5, "cdf": "websearch", "hosts": ["h0", "h1", "h2", "h3", "r0"], "from": "0s", "until": "1s"}]}`

func TestCompile(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		limits  Limits
		prefix  string
		kind    Kind   // 0: compiles
		field   string // of the first problem
		refused string // the limit a run would exceed
	}{
		{name: "valid", doc: incast},
		{name: "not a scenario", doc: `{"name": "x", "topology": {"kind": "ring"}}`, kind: Invalid, field: "topology.kind"},
		{name: "named under a prefix", doc: `{"name": "x", "topology": {"kind": "ring"}}`, prefix: "scenario", kind: Invalid, field: "scenario.topology.kind"},
		{name: "over a limit", doc: incast, limits: Limits{MaxFlows: 2}, refused: "max-flows"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile([]byte(tc.doc), tc.limits, tc.prefix)
			if tc.kind != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.kind || !slices.ContainsFunc(e.Errors, func(f FieldError) bool { return f.Field == tc.field }) {
					t.Fatalf("error %#v, want kind %d on %s", err, tc.kind, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Config.Flows) != 4 || c.Cost.Flows != 4 || len(c.Meta.Hosts) != 5 || len(c.Canonical) == 0 {
				t.Errorf("compiled %d flows, cost %+v, hosts %v", len(c.Config.Flows), c.Cost, c.Meta.Hosts)
			}
			if tc.refused != "" {
				if c.Runnable() || c.Refused.Limit != tc.refused || c.sim != nil {
					t.Errorf("refused %+v, engine built %v", c.Refused, c.sim != nil)
				}
				return
			}
			// the engine Compile built is the first run's; later runs get
			// their own
			built := c.sim
			s1, err := c.Engine()
			if err != nil || s1 != built || built == nil {
				t.Fatalf("first engine %p, built %p, %v", s1, built, err)
			}
			s2, err := c.Engine()
			if err != nil || s2 == s1 {
				t.Fatalf("second engine %p is the first %p (%v)", s2, s1, err)
			}
		})
	}
}

// stepper records what Drive asks and can stop or hold the run back.
type stepper struct {
	proposed []sim.Time
	stopAt   sim.Time // stop once the run reaches it (0: never)
	holdOnce bool     // answer "wait" once, at the start
	waits    int
}

func (st *stepper) Before(s *sim.Sim, proposed sim.Time) (sim.Time, bool) {
	st.proposed = append(st.proposed, proposed)
	if st.stopAt > 0 && s.Now() >= st.stopAt {
		return 0, true
	}
	if st.holdOnce {
		st.holdOnce = false
		return s.Now(), false
	}
	return proposed, false
}

func (st *stepper) Wait()          { st.waits++ }
func (st *stepper) After(*sim.Sim) {}

// Driving a run in slices gives the results of one uninterrupted run, and
// a stepper stops it or holds it back.
func TestDrive(t *testing.T) {
	c, err := Compile([]byte(incast), Limits{}, "")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := c.Engine()
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.RunUntil(sim.MaxDuration); err != nil {
		t.Fatal(err)
	}
	t.Run("to the end", func(t *testing.T) {
		s, _ := c.Engine()
		st := &stepper{holdOnce: true}
		if err := Drive(s, st); err != nil {
			t.Fatal(err)
		}
		if !s.Done() || st.waits != 1 || len(st.proposed) < 2 {
			t.Fatalf("done %v, waits %d, slices %d", s.Done(), st.waits, len(st.proposed))
		}
		if st.proposed[0] != 10*sim.Microsecond {
			t.Errorf("first slice to %v, want 10 µs", st.proposed[0])
		}
		if !reflect.DeepEqual(s.Result().Flows, whole.Result().Flows) || s.Events() != whole.Events() {
			t.Errorf("sliced run: %d events, whole: %d; flows differ: %v", s.Events(), whole.Events(),
				!reflect.DeepEqual(s.Result().Flows, whole.Result().Flows))
		}
	})
	t.Run("stopped", func(t *testing.T) {
		s, _ := c.Engine()
		st := &stepper{stopAt: 5 * sim.Microsecond}
		if err := Drive(s, st); err != nil {
			t.Fatal(err)
		}
		if s.Done() || s.Now() < 5*sim.Microsecond || s.Now() >= whole.Now() {
			t.Errorf("stopped at %v, done %v", s.Now(), s.Done())
		}
	})
}

// manager opens a store and a manager on it, with the scenarios stored.
func manager(t *testing.T, cfg Config, docs ...string) (*Manager, *store.DB, []*Compiled) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond) // runs still going are stopped
		defer cancel()
		m.Shutdown(sctx)
		db.Close()
	})
	var cs []*Compiled
	for _, d := range docs {
		c, err := Compile([]byte(d), cfg.Limits, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutScenario(ctx, &store.Scenario{Name: c.Scenario.Name, JSON: c.Canonical}); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return m, db, cs
}

func submit(t *testing.T, m *Manager, c *Compiled, client string) string {
	t.Helper()
	rec, err := m.Submit(context.Background(), Submission{ScenarioID: store.ScenarioID(c.Canonical), Name: c.Scenario.Name, Compiled: c, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// watch reads a run's hub as a viewer does until its final message.
func watch(t *testing.T, m *Manager, id string) (Final, int) {
	t.Helper()
	h, err := m.Watch(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unwatch(id, h)
	v := h.Join()
	defer h.Leave(v)
	cur := &Cursor{}
	points := 0
	deadline := time.After(30 * time.Second)
	for {
		select {
		case <-v.C():
		case <-deadline:
			t.Fatalf("run %s: no final message", id)
		}
		for {
			f := h.Next(cur, MaxTime, 1000)
			if f.Samples != nil {
				points += f.Samples.Points
			}
			if f.Final != nil {
				return *f.Final, points
			}
			if !f.More {
				break
			}
		}
	}
}

// A run goes from Submit to a stored result its viewers see end; a run
// that waits for a slot can be cancelled, and then never starts.
func TestManagerLifecycle(t *testing.T) {
	m, db, cs := manager(t, Config{Concurrency: 1}, long, incast)
	ctx := context.Background()
	first := submit(t, m, cs[0], "a")
	queued := submit(t, m, cs[1], "a")
	if running, waiting := m.Counts(); running != 1 || waiting != 1 {
		t.Fatalf("%d running, %d queued", running, waiting)
	}
	var e *Error
	if err := m.Pause(ctx, queued); !errors.As(err, &e) || e.Kind != Conflict {
		t.Errorf("pausing a queued run: %v", err)
	}
	if err := m.Cancel(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if f, _ := watch(t, m, queued); f.Status != store.StatusCancelled {
		t.Errorf("the queued run ended %+v", f)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if p, ok := m.LiveProgress(first); ok && p.SimNs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run made no progress")
		}
	}
	if err := m.Cancel(ctx, first); err != nil {
		t.Fatal(err)
	}
	m.WaitEnded(ctx, first, 10*time.Second)
	rec, err := db.GetRun(ctx, first)
	if err != nil || rec.Status != store.StatusCancelled || rec.Progress.SimPS == 0 {
		t.Fatalf("the cancelled run: %v at %d ps (%v)", rec.Status, rec.Progress.SimPS, err)
	}
	// the next run goes to its end; a viewer who joins late sees it all
	id := submit(t, m, cs[1], "a")
	m.WaitEnded(ctx, id, 30*time.Second)
	f, points := watch(t, m, id)
	rec, err = db.GetRun(ctx, id)
	if err != nil || f.Type != "done" || f.Status != store.StatusDone || rec.Status != store.StatusDone || points == 0 || len(f.Summary) == 0 {
		t.Fatalf("final %s %s, %d points, stored %s (%v)", f.Type, f.Status, points, rec.Status, err)
	}
	flows, err := db.Flows(ctx, id)
	if err != nil || len(flows) != 4 || !flows[0].Finished || flows[0].Algorithm != "dcqcn" {
		t.Errorf("stored flows %+v %v", flows, err)
	}
	if err := m.Cancel(ctx, id); !errors.As(err, &e) || e.Kind != Conflict {
		t.Errorf("cancelling a finished run: %v", err)
	}
}

// Admission: the per-client limit and a scenario over the limits are
// refused with the limit's name; nothing is stored for them.
func TestManagerAdmission(t *testing.T) {
	m, db, cs := manager(t, Config{Concurrency: 1, ClientRuns: 1, Limits: Limits{MaxFlows: 100_000}}, long)
	ctx := context.Background()
	submit(t, m, cs[0], "a")
	_, err := m.Submit(ctx, Submission{ScenarioID: store.ScenarioID(cs[0].Canonical), Compiled: cs[0], Client: "a"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != TooMany || e.Limit != "max-client-runs" {
		t.Errorf("a second run of one client: %v", err)
	}
	big, err := Compile([]byte(incast), Limits{MaxFlows: 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Submit(ctx, Submission{ScenarioID: store.ScenarioID(big.Canonical), Compiled: big, Client: "b"})
	if !errors.As(err, &e) || e.Kind != Refused || e.Limit != "max-flows" {
		t.Errorf("a run over the flow limit: %v", err)
	}
	if n, err := db.CountRuns(ctx, store.RunFilter{}); err != nil || n != 1 {
		t.Errorf("%d runs stored, want 1 (%v)", n, err)
	}
}
