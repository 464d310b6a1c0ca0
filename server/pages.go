package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"cclab/cc"
	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/sim"
	"cclab/sim/report"
	"cclab/static"
	"cclab/store"
	"cclab/web"
)

// The pages (scenarios/scenario-format.md, "Pages"): server-rendered with
// templ from the same data the API serves; the scripts in static/js then
// talk to the public API only.

// pageRoutes adds the pages and the page fragments htmx asks for.
func (s *Server) pageRoutes(r chi.Router) {
	r.Get("/", s.handleHome)
	r.Get("/instructor", s.handleInstructor)
	r.Get("/lab", s.handleLab)
	r.Get("/s/{id}", s.handleLab)
	r.Get("/r/{id}", s.handleRunPage)
	r.Get("/compare", s.handleComparePage)
	r.Get("/class", s.handleClassPage)
	r.Get("/reproductions", s.handleReproductionsPage)
	r.Get("/stability", s.handleStabilityPage)
	r.Get("/train", s.handleTrainPage)
	r.Get("/reproductions/{experiment}", s.handleReproSection)
	r.Post("/reproductions/{experiment}/run", s.handleReproRun)
	r.Get("/ui/params", s.handleParamsFragment)
	r.Post("/ui/topology", s.handleTopologyFragment)
	r.Get("/ui/sketch/{id}", s.handleSketchFragment)
	sub, err := fs.Sub(static.FS, ".")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	r.Get("/static/*", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

// render writes a page; a failure after the header is only logged.
func (s *Server) render(w http.ResponseWriter, r *http.Request, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	ctx := web.WithViewer(r.Context(), web.Viewer{Instructor: who(r).instructor})
	if err := c.Render(ctx, w); err != nil {
		s.log.Warn("rendering a page", "path", r.URL.Path, "err", err)
	}
}

// pageError answers a page request that failed: the error in a page, with
// the status the API would give.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	err = asAPIError(err)
	var ae *apiError
	status := http.StatusInternalServerError
	msg := "internal error"
	switch {
	case errors.As(err, &ae):
		status, msg = ae.Status, ae.Msg
	case errors.Is(err, store.ErrNotFound):
		status, msg = http.StatusNotFound, "not found"
	default:
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	s.render(w, r, web.ErrorPage(status, msg))
}

// cardCache keeps the cards of scenarios (content-addressed, so a card never
// goes stale), bounded.
type cardCache struct {
	mu    sync.Mutex
	cards map[string]web.Card
}

func (c *cardCache) get(id string) (web.Card, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	card, ok := c.cards[id]
	return card, ok
}

func (c *cardCache) put(id string, card web.Card) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cards == nil || len(c.cards) > 1000 {
		c.cards = map[string]web.Card{}
	}
	c.cards[id] = card
}

// papers names the work a built-in scenario reproduces, by name prefix.
var papers = []struct{ prefix, paper string }{
	{"mpcc-", "the MPCC thesis (model predictive congestion control)"},
	{"fattree16-", "the MPCC thesis' fat-tree, Exp. 3"},
	{"qcn-", "the QCN stability paper (the Averaging Principle)"},
	{"rcc-", "the RCC paper (receiver-driven congestion control)"},
	{"fdcc-", "the FDCC thesis (deep-RL congestion control)"},
	{"dolce-", "the Dolce-RC paper (DCQCN tuned online by a bandit)"},
	{"fairness-2flows-hpcc", "HPCC's fairness experiment (the reference simulator)"},
	{"incast-16to1-dcqcn", "DCQCN under incast (the HPCC paper's baseline)"},
}

func paperOf(name string) string {
	for _, p := range papers {
		if strings.HasPrefix(name, p.prefix) {
			return p.paper
		}
	}
	return ""
}

// maxSketchPorts bounds the topologies a card sketches: a 320-host tree
// would be thousands of SVG elements for a thumbnail.
const maxSketchPorts = 300

// preview builds a scenario for a page to draw (its topology, its hosts
// and flows), without an engine: the one place pages turn a scenario into
// an engine config (cc.policy resolved to the stored policies, as runs
// resolve it). A scenario that does not build has no preview.
func (s *Server) preview(sc *scenarios.Scenario) (*sim.Config, *scenarios.Meta, bool) {
	cfg, meta, err := scenarios.BuildWith(sc, scenarios.BuildOptions{Policy: s.resolvePolicy})
	return cfg, meta, err == nil
}

// card builds a scenario's card (parsing and building it once).
func (s *Server) card(sc *store.Scenario) web.Card {
	if c, ok := s.cards.get(sc.ID); ok {
		return c
	}
	c := web.Card{ID: sc.ID, Library: s.libNames[sc.ID], Name: sc.Name, Description: sc.Description, Builtin: sc.Builtin}
	if c.Library != "" {
		c.Paper = paperOf(c.Library)
		c.Look = lookFor[c.Library]
	}
	if parsed, err := scenarios.Parse(sc.JSON); err == nil {
		c.Algorithm, c.Kind = parsed.CC.Algorithm, parsed.Topology.Kind
		if cfg, meta, ok := s.preview(parsed); ok {
			c.Hosts, c.Flows = len(meta.Hosts), len(cfg.Flows)
			cost := runs.Estimate(cfg)
			s.mgr.Speed().Apply(&cost)
			c.Wall = cost.WallSeconds
			c.Takes = aboutHowLong(c.Wall)
			if len(meta.Ports) <= maxSketchPorts {
				c.Sketch = web.PlaceTopo(meta.Hosts, meta.Ports)
			}
		}
	}
	s.cards.put(sc.ID, c)
	return c
}

func runRow(r *store.Run) web.RunRow {
	return web.RunRow{ID: r.ID, ScenarioID: r.ScenarioID, Name: r.Name, Algorithm: r.Algorithm, Status: r.Status,
		Created: r.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Progress: r.Progress.Fraction, Pinned: r.Pinned}
}

func (s *Server) handleHome(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListScenarios(r.Context())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var h web.Home
	cardOf := func(id string) (web.Card, error) {
		if c, ok := s.cards.get(id); ok {
			return c, nil
		}
		// the list leaves the documents out: read the one to build
		full, err := s.db.GetScenario(r.Context(), id)
		if err != nil {
			return web.Card{}, err
		}
		return s.card(full), nil
	}
	for i := range list {
		sc := &list[i]
		if !sc.Builtin && len(h.Stored) >= 12 {
			continue
		}
		c, err := cardOf(sc.ID)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		if sc.Builtin {
			h.Library = append(h.Library, c)
		} else {
			h.Stored = append(h.Stored, c)
		}
	}
	// the instructor's featured scenarios come first (a deleted one is
	// left out)
	featured, err := s.featured(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	for _, id := range featured {
		c, err := cardOf(id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		h.Featured = append(h.Featured, c)
	}
	runs, err := s.db.ListRuns(r.Context(), store.RunFilter{Limit: 20})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	for i := range runs {
		h.Runs = append(h.Runs, runRow(&runs[i]))
	}
	h.Topics = libraryTopics(h.Library)
	for _, cs := range [][]web.Card{h.Featured, h.Library, h.Stored} {
		for i := range cs {
			cs[i].Lazy = true // sketches are drawn as the cards scroll into view
		}
	}
	for i := range h.Topics {
		for j := range h.Topics[i].Cards {
			h.Topics[i].Cards[j].Lazy = true
		}
	}
	s.render(w, r, web.HomePage(h))
}

// newScenario is what "New scenario" opens: a 4-to-1 incast on a 100 Gbps
// dumbbell under DCQCN, for 2 ms.
const newScenario = `{"name": "my-scenario", "description": "",
 "topology": {"kind": "dumbbell", "senders": 4, "hostLink": {"rate": "100Gbps", "delay": "1us"},
   "bottleneck": {"rate": "100Gbps", "delay": "1us"}},
 "cc": {"algorithm": "dcqcn"}, "duration": "2ms",
 "workload": [{"kind": "incast", "senders": ["h0", "h1", "h2", "h3"], "receiver": "r0", "size": "300KB", "start": "0s"}]}`

func algos() []web.Algo {
	var out []web.Algo
	for _, a := range cc.Algorithms() {
		out = append(out, webAlgo(a))
	}
	return out
}

func webAlgo(a *cc.Algorithm) web.Algo {
	wa := web.Algo{Name: a.Name, Title: a.Title, Help: a.Help}
	for _, p := range a.Param {
		wa.Params = append(wa.Params, web.Param{Name: p.Name, Unit: p.Unit, Help: p.Help, Default: p.Default,
			Min: p.Min, Max: p.Max, Live: p.Live})
	}
	for _, p := range a.Presets {
		wa.Presets = append(wa.Presets, web.Preset{Name: p.Name, Help: p.Help, Values: p.Values})
	}
	return wa
}

func (s *Server) handleLab(w http.ResponseWriter, r *http.Request) {
	l := web.Lab{Algorithms: algos(), CDFs: scenarios.CDFNames(), RunID: r.URL.Query().Get("run"), Instructor: who(r).instructor}
	if l.Instructor {
		featured, err := s.featured(r)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		l.Featured = featured
	}
	doc := []byte(newScenario)
	if from := r.URL.Query().Get("from"); from != "" {
		// a run's own scenario (overrides and live changes included),
		// unsaved until it runs
		run, err := s.db.GetRun(r.Context(), from)
		if errors.Is(err, store.ErrNotFound) {
			err = errorf(http.StatusNotFound, "from", "no run %q", from)
		}
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		doc = run.Scenario
		l.Name = run.Name + " (as run " + run.ID + ")"
		l.Parent = run.ScenarioID
	} else if id := chi.URLParam(r, "id"); id != "" {
		sc, err := s.resolveScenario(r, id)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		doc, l.ScenarioID, l.Name, l.Builtin = sc.JSON, sc.ID, sc.Name, sc.Builtin
	}
	parsed, err := scenarios.Parse(doc)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	canon, err := parsed.Canonical()
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	l.ScenarioJSON = string(canon)
	if _, meta, ok := s.preview(parsed); ok {
		l.Topo = web.PlaceTopo(meta.Hosts, meta.Ports)
	}
	s.render(w, r, web.LabPage(l))
}

func (s *Server) handleParamsFragment(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("algo")
	a, ok := cc.Lookup(name)
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "<p class=\"error\">no algorithm %q</p>", templ.EscapeString(name))
		return
	}
	wa := webAlgo(a)
	if wa.Learned = a.WithPolicy != nil; wa.Learned {
		wa.Policies = s.policyNames(r.Context(), a.Name)
	}
	s.render(w, r, web.ParamsForm(wa))
}

func (s *Server) handleTopologyFragment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Hosts []string `json:"hosts"`
		Ports []string `json:"ports"`
	}
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.render(w, r, web.TopoSVG(web.PlaceTopo(req.Hosts, req.Ports), true))
}

// handleSketchFragment draws a card's topology sketch (the home page asks
// for it when the card scrolls into view).
func (s *Server) handleSketchFragment(w http.ResponseWriter, r *http.Request) {
	sc, err := s.resolveScenario(r, chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "max-age=3600") // a scenario id names its content
	s.render(w, r, web.Sketch(s.card(sc)))
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func gp(v *float64) string {
	if v == nil {
		return "–"
	}
	return g(*v)
}

func maxOf(m map[string]float64) (string, float64) {
	best, name := -1.0, ""
	for k, v := range m {
		if v > best || (v == best && k < name) {
			best, name = v, k
		}
	}
	return name, best
}

// creditDrops sums the credits the ports' credit queues dropped and names
// the port that dropped the most.
func creditDrops(m map[string]int64) string {
	var total int64
	f := make(map[string]float64, len(m))
	for k, v := range m {
		total += v
		f[k] = float64(v)
	}
	name, most := maxOf(f)
	return fmt.Sprintf("%d, most at %s (%d)", total, name, int64(most))
}

func (s *Server) handleRunPage(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := s.runView(r, run)
	p := web.RunPage{Run: runRow(run), Error: run.Error, Seed: strconv.FormatUint(run.Seed, 10),
		Terminal: store.Terminal(run.Status), CodeVersion: run.CodeVersion, Mine: v.Mine, Speed: fmt.Sprint(v.Speed)}
	p.Run.Status = v.Status
	// the parameters as the run started (the stored ones have its live
	// changes applied), each live change with the value it replaced
	var params map[string]float64
	_ = json.Unmarshal(run.Params, &params)
	evs, err := s.db.RunEvents(r.Context(), run.ID)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if parsed, err := scenarios.Parse(run.Scenario); err == nil {
		if cfg, meta, ok := s.preview(parsed); ok {
			p.Topo = web.PlaceTopo(meta.Hosts, meta.Ports)
			if start := startParams(parsed, cfg); start != nil {
				params = start
			}
		}
		p.Params = paramRows(params)
		if parsed.CC.Policy != "" {
			// a learned algorithm's trained policy (cc.policy)
			p.Params = append([]web.Row{{Label: "policy", Value: parsed.CC.Policy}}, p.Params...)
		}
	} else {
		p.Params = paramRows(params)
	}
	p.Changes = changeRows(params, evs)
	// the values now, which a change made while the page is open replaces
	p.Current = make(map[string]float64, len(params))
	for k, v := range params {
		p.Current[k] = v
	}
	for _, e := range evs {
		for k, v := range e.Params {
			p.Current[k] = v
		}
	}
	var sum report.Summary
	if len(run.Summary) > 0 && json.Unmarshal(run.Summary, &sum) == nil {
		rows := []web.Row{
			{Label: "flows finished", Value: fmt.Sprintf("%d of %d", sum.FlowsFinished, sum.FlowsTotal)},
			{Label: "simulated", Value: scenarios.FormatTime(sim.Time(int64(sum.SimSeconds * 1e12)))},
			{Label: "ended because", Value: sum.EndReason},
		}
		if f := sum.FCTSlowdown; f != nil {
			rows = append(rows,
				web.Row{Label: "FCT slowdown mean", Value: g(f.Mean)},
				web.Row{Label: "FCT slowdown p50 / p95 / p99", Value: g(f.P50) + " / " + g(f.P95) + " / " + g(f.P99)})
		}
		rows = append(rows,
			web.Row{Label: "switch queue p50 / p99 / max", Value: fmt.Sprintf("%s / %s / %s",
				scenarios.FormatSize(sum.SwitchQueues.P50), scenarios.FormatSize(sum.SwitchQueues.P99),
				scenarios.FormatSize(sum.SwitchQueues.Max))})
		if name, u := maxOf(sum.Utilization); name != "" {
			rows = append(rows, web.Row{Label: "busiest port", Value: fmt.Sprintf("%s, %.1f%% busy", name, 100*u)})
		}
		if name, pf := maxOf(sum.PFCPauseFraction); name != "" && pf > 0 {
			rows = append(rows, web.Row{Label: "most paused port (PFC)", Value: fmt.Sprintf("%s, %.2f%% of the time", name, 100*pf)})
		}
		jain := "– (needs a duration and at least 2 flows active through its second half)"
		if sum.Jain != nil {
			jain = strconv.FormatFloat(*sum.Jain, 'f', 4, 64)
		}
		rows = append(rows,
			web.Row{Label: "Jain's fairness (second half)", Value: jain},
			web.Row{Label: "drops", Value: g(float64(sum.Drops))},
		)
		if len(sum.CreditDrops) > 0 {
			rows = append(rows, web.Row{Label: "credit drops", Value: creditDrops(sum.CreditDrops)})
		}
		rows = append(rows,
			web.Row{Label: "retransmitted", Value: scenarios.FormatSize(sum.Retransmitted)},
			web.Row{Label: "wall time", Value: fmt.Sprintf("%.3g s, %.3g M events/s", sum.WallSeconds, sum.EventsPerSecond/1e6)},
		)
		p.Summary = rows
		buckets := report.SizeBuckets()
		for i, b := range sum.FCTSlowdownBySize {
			if i >= len(buckets) {
				break
			}
			p.Sizes = append(p.Sizes, web.SizeRow{Bucket: buckets[i].Label, Count: b.Count, Mean: gp(b.Mean), P50: gp(b.P50), P95: gp(b.P95), P99: gp(b.P99)})
		}
	} else {
		p.Summary = []web.Row{{Label: "progress", Value: fmt.Sprintf("%.0f%%", 100*v.Progress)}}
	}
	s.render(w, r, web.RunPageView(p))
}

func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	var c web.ComparePage
	if ids := compareIDs(r); len(ids) > 0 {
		var err error
		if c, err = s.comparePage(r, ids); err != nil {
			s.pageError(w, r, err)
			return
		}
	}
	recent, err := s.db.ListRuns(r.Context(), store.RunFilter{Limit: 50})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	for i := range recent {
		c.Recent = append(c.Recent, runRow(&recent[i]))
	}
	s.render(w, r, web.ComparePageView(c))
}

// limitFields are the class limits as the instructor's form shows them.
func limitFields(l ClassLimits) []web.LimitField {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	return []web.LimitField{
		{Name: "clientRuns", Label: "Runs at once", Value: strconv.Itoa(l.ClientRuns),
			Help: "Runs one student may have queued, running or paused."},
		{Name: "runsPerMinute", Label: "Runs started per minute", Value: num(l.RunsPerMinute),
			Help: "How fast one student may start runs, on average."},
		{Name: "runsBurst", Label: "Burst of runs", Value: strconv.Itoa(l.RunsBurst),
			Help: "How many runs one student may start at once before the per-minute rate applies."},
		{Name: "workPerHour", Label: "Work per hour (data packets)", Value: num(l.WorkPerHour),
			Help: "Data packets one student may simulate per hour, as a run's cost estimate counts them."},
		{Name: "viewersPerOwner", Label: "Live views open", Value: strconv.Itoa(l.ViewersPerOwner),
			Help: "Live run streams one student may have open (one per lab or run page following a run)."},
		{Name: "tokensPerHour", Label: "New browsers per address per hour", Value: strconv.Itoa(l.TokensPerHour),
			Help: "Owner tokens one IP address may be given per hour (a classroom behind one address needs one per student)."},
	}
}

// handleClassPage is the instructor's class view (the data of GET
// /api/class); anyone else is told how to sign in.
func (s *Server) handleClassPage(w http.ResponseWriter, r *http.Request) {
	if !who(r).instructor {
		s.render(w, r, web.ClassView(web.ClassPage{}))
		return
	}
	c, err := s.classView(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := web.ClassPage{Instructor: true, Running: c.Running, Queued: c.Queued, Limits: limitFields(c.Limits)}
	for _, o := range c.Owners {
		p.Owners = append(p.Owners, web.ClassOwner{Owner: o.Owner, Runs: o.Runs, Active: o.Active,
			Finished: o.Finished, Failed: o.Failed, Latest: o.Latest})
	}
	for _, id := range c.Featured {
		f := web.Featured{ID: id}
		if sc, err := s.db.GetScenario(r.Context(), id); err == nil {
			f.Name = sc.Name
		}
		p.Featured = append(p.Featured, f)
	}
	s.render(w, r, web.ClassView(p))
}
