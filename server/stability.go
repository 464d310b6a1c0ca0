package server

import (
	"bytes"
	"cclab/scenarios"
	"cclab/web"
	"encoding/json"
	"errors"
	"net/http"

	"cclab/sim/fluid"
)

// The stability lab's API (scenarios/scenario-format.md, "Stability"):
// seed 003's fluid models and linear margins, and the DCQCN fluid model,
// computed on request. Nothing is stored; every answer is deterministic.

// Bounds on one request's work: a fluid run of at most maxFluidSteps
// integration steps and maxFluidSamples samples, at most maxFreqPoints
// frequencies.
const (
	maxFluidSteps   = 4_000_000
	maxFluidSamples = 20_000
	maxFreqPoints   = 2000
)

type fluidRunRequest struct {
	Duration float64 `json:"duration"` // seconds
	Dt       float64 `json:"dt"`       // seconds
	Every    float64 `json:"every"`    // seconds
	Start    string  `json:"start"`    // "empty" (default) or "fixed"
}

type qcnRequest struct {
	Params json.RawMessage  `json:"params"`
	Points int              `json:"points"`
	Fluid  *fluidRunRequest `json:"fluid"`
}

type fluidRun struct {
	*fluid.Trajectory
	Error string `json:"error,omitempty"`
}

type complexJSON struct {
	Re float64 `json:"re"`
	Im float64 `json:"im"`
}

type qcnAnswer struct {
	Params     fluid.QCN                       `json:"params"`
	Margins    *fluid.Margins                  `json:"margins"`
	Bode       map[fluid.Loop]*fluid.Frequency `json:"bode"`
	Roots      map[fluid.Loop][]complexJSON    `json:"roots"`
	FixedPoint map[fluid.Model]fluid.Start     `json:"fixedPoint"`
	Fluid      map[fluid.Model]fluidRun        `json:"fluid"`
	Paper      map[string]float64              `json:"paper"`
}

// decodeOnto decodes raw (absent or null: nothing) over v, which holds a
// model's defaults, so that a field left out keeps its default, then
// validates it; errors name the field under prefix.
func decodeOnto[T interface{ Validate() error }](raw json.RawMessage, v *T, prefix string) error {
	if len(raw) > 0 && string(raw) != "null" {
		if err := decodeStrict(raw, v); err != nil {
			return prefixField(err, prefix)
		}
	}
	if err := (*v).Validate(); err != nil {
		return paramErrors(err, prefix)
	}
	return nil
}

// qcnParams decodes params onto the paper's baseline.
func qcnParams(raw json.RawMessage) (fluid.QCN, error) {
	q := fluid.Baseline()
	return q, decodeOnto(raw, &q, "params")
}

// paramErrors turns the fluid package's ParamErrors into a 422 listing
// each, named by its field in the request.
func paramErrors(err error, prefix string) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	var ae *apiError
	for _, e := range list {
		field, msg := "", e.Error()
		var pe *fluid.ParamError
		if errors.As(e, &pe) {
			field, msg = pe.Param, pe.Msg
			if prefix != "" {
				field = prefix + "." + field
			}
		}
		if ae == nil {
			ae = errorf(http.StatusUnprocessableEntity, field, "%s", msg)
		} else {
			ae.Errors = append(ae.Errors, fieldError{Field: field, Error: msg})
		}
	}
	return ae
}

// prefixField puts a decoding error's field under prefix; an error about
// the whole value (not an object) is the prefix's own.
func prefixField(err error, prefix string) error {
	var ae *apiError
	if errors.As(err, &ae) {
		ae.Field = join(prefix, ae.Field)
		for i := range ae.Errors {
			ae.Errors[i].Field = join(prefix, ae.Errors[i].Field)
		}
	}
	return err
}

// join is a field under prefix (prefix itself for the empty field).
func join(prefix, field string) string {
	if field == "" {
		return prefix
	}
	return prefix + "." + field
}

// fluidOptions checks a fluid run's request against the model's RTT and
// this server's bounds, filling in the defaults: 50 ms, a step of
// min(0.5 µs, RTT/4), a sample every 20 µs, from an empty queue.
func fluidOptions(o *fluidRunRequest, rtt float64) (fluidRunRequest, error) {
	r := fluidRunRequest{Duration: 0.05, Dt: 0.5e-6, Every: 20e-6, Start: "empty"}
	if rtt > 0 && rtt/4 < r.Dt {
		r.Dt = rtt / 4
	}
	if o != nil {
		if o.Duration != 0 {
			r.Duration = o.Duration
		}
		if o.Dt != 0 {
			r.Dt = o.Dt
		}
		if o.Every != 0 {
			r.Every = o.Every
		}
		if o.Start != "" {
			r.Start = o.Start
		}
	}
	switch {
	case r.Start != "empty" && r.Start != "fixed":
		return r, errorf(http.StatusUnprocessableEntity, "fluid.start", "want empty or fixed, got %q", r.Start)
	case !(r.Duration > 0) || !(r.Dt > 0) || r.Duration/r.Dt > maxFluidSteps:
		return r, limitError(http.StatusUnprocessableEntity, "fluid-steps", "fluid.duration",
			"want a positive duration of at most %d steps of dt, got %g s at dt %g s", maxFluidSteps, r.Duration, r.Dt)
	case !(r.Every > 0) || r.Duration/r.Every > maxFluidSamples:
		return r, limitError(http.StatusUnprocessableEntity, "fluid-samples", "fluid.every",
			"want at most %d samples, got a %g s run sampled every %g s", maxFluidSamples, r.Duration, r.Every)
	}
	return r, nil
}

// checkDelay refuses a model whose delay spans more steps of dt than a
// fluid run may take: the integration keeps a history of that many steps.
func checkDelay(delay, dt float64, field string) error {
	if delay/dt > maxFluidSteps {
		return limitError(http.StatusUnprocessableEntity, "fluid-steps", field,
			"a delay of %g s is more than %d steps of dt %g s (the fluid run keeps that much history)", delay, maxFluidSteps, dt)
	}
	return nil
}

func (s *Server) handleStabilityQCN(w http.ResponseWriter, r *http.Request) {
	var req qcnRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := qcnParams(req.Params)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Points == 0 {
		req.Points = 200
	}
	if req.Points < 2 || req.Points > maxFreqPoints {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "points", "between 2 and %d frequencies, got %d", maxFreqPoints, req.Points))
		return
	}
	fo, err := fluidOptions(req.Fluid, q.RTT)
	if err == nil {
		err = checkDelay(q.RTT, fo.Dt, "params.rtt")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := fluid.ComputeMargins(q)
	if err != nil {
		s.writeError(w, r, paramErrors(err, "params"))
		return
	}
	ans := qcnAnswer{Params: q, Margins: m, Bode: map[fluid.Loop]*fluid.Frequency{}, Roots: map[fluid.Loop][]complexJSON{},
		FixedPoint: map[fluid.Model]fluid.Start{}, Fluid: map[fluid.Model]fluidRun{},
		Paper: map[string]float64{"tauStarUs": fluid.TauStarPaper * 1e6, "tauHatUs": fluid.TauHatPaper * 1e6}}
	l := q.Linearise()
	for _, loop := range []fluid.Loop{fluid.LoopQCN, fluid.LoopQCNAIMD} {
		f, err := l.Response(loop, q.RTT, req.Points)
		if err != nil {
			s.writeError(w, r, paramErrors(err, ""))
			return
		}
		ans.Bode[loop] = f
		roots, err := l.Roots(loop, q.RTT, 6)
		if err != nil {
			s.writeError(w, r, paramErrors(err, ""))
			return
		}
		ans.Roots[loop] = []complexJSON{}
		for _, z := range roots {
			ans.Roots[loop] = append(ans.Roots[loop], complexJSON{real(z), imag(z)})
		}
	}
	for _, model := range []fluid.Model{fluid.ModelQCN, fluid.ModelQCNAIMD} {
		fp := q.FixedPoint(model)
		ans.FixedPoint[model] = fp
		start := q.EmptyStart()
		if fo.Start == "fixed" {
			start = fp
		}
		tr, err := q.Integrate(model, start, fo.Duration, fo.Dt, fo.Every)
		run := fluidRun{Trajectory: tr}
		if err != nil {
			var pe *fluid.ParamError
			if errors.As(err, &pe) {
				s.writeError(w, r, paramErrors(err, "fluid"))
				return
			}
			run.Error = err.Error() // diverged: the samples before it, and why
		}
		ans.Fluid[model] = run
	}
	s.writeFinite(w, r, ans)
}

type marginsRequest struct {
	Params json.RawMessage `json:"params"`
}

func (s *Server) handleStabilityMargins(w http.ResponseWriter, r *http.Request) {
	var req marginsRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := qcnParams(req.Params)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := fluid.ComputeMargins(q)
	if err != nil {
		s.writeError(w, r, paramErrors(err, "params"))
		return
	}
	s.writeFinite(w, r, m)
}

type sweepRequest struct {
	Params json.RawMessage `json:"params"`
	Param  string          `json:"param"`
	From   float64         `json:"from"`
	To     float64         `json:"to"`
	Points int             `json:"points"`
	Log    bool            `json:"log"`
}

func (s *Server) handleStabilitySweep(w http.ResponseWriter, r *http.Request) {
	var req sweepRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := qcnParams(req.Params)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	known := false
	for _, p := range fluid.Params {
		known = known || p == req.Param
	}
	if !known || req.Param == "buffer" {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "param", "want one of c, n, gd, w, ps, rai, qeq, packet, rtt; got %q", req.Param))
		return
	}
	if req.Points == 0 {
		req.Points = 50
	}
	if req.Points > maxFreqPoints {
		s.writeError(w, r, limitError(http.StatusUnprocessableEntity, "sweep-points", "points", "at most %d points, got %d", maxFreqPoints, req.Points))
		return
	}
	vals, err := fluid.Span(req.Param, req.From, req.To, req.Points, req.Log)
	if err != nil {
		s.writeError(w, r, paramErrors(err, ""))
		return
	}
	pts, err := fluid.Sweep(q, req.Param, vals)
	if err != nil {
		// a value of the span outside the model's domain: name the end
		// of the span it lies at
		field := "to"
		if _, e := fluid.Sweep(q, req.Param, vals[:1]); e != nil {
			field = "from"
		}
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, field, "%v", err))
		return
	}
	s.writeFinite(w, r, map[string]any{"param": req.Param, "points": pts,
		"paper": map[string]float64{"tauStarUs": fluid.TauStarPaper * 1e6, "tauHatUs": fluid.TauHatPaper * 1e6}})
}

type dcqcnRequest struct {
	Params json.RawMessage  `json:"params"`
	Fluid  *fluidRunRequest `json:"fluid"`
}

type dcqcnAnswer struct {
	Params          fluid.DCQCN            `json:"params"`
	FixedPoint      *fluid.DCQCNState      `json:"fixedPoint,omitempty"`
	PStar           float64                `json:"pStar,omitempty"`
	FixedPointError string                 `json:"fixedPointError,omitempty"`
	Trajectory      *fluid.DCQCNTrajectory `json:"trajectory"`
	Error           string                 `json:"error,omitempty"`
}

func (s *Server) handleStabilityDCQCN(w http.ResponseWriter, r *http.Request) {
	var req dcqcnRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d := fluid.DCQCNBaseline()
	if err := decodeOnto(req.Params, &d, "params"); err != nil {
		s.writeError(w, r, err)
		return
	}
	o := req.Fluid
	if o == nil {
		o = &fluidRunRequest{}
	}
	if o.Duration == 0 {
		o.Duration = 0.1
	}
	if o.Every == 0 {
		o.Every = 50e-6
	}
	fo, err := fluidOptions(o, d.Tau)
	if err == nil {
		err = checkDelay(d.Delay, fo.Dt, "params.delay")
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ans := dcqcnAnswer{Params: d}
	fp, p, err := d.FixedPoint()
	if err != nil {
		ans.FixedPointError = err.Error()
	} else {
		ans.FixedPoint, ans.PStar = &fp, p
	}
	line := d.C / (8 * d.Packet)
	start := fluid.DCQCNState{RC: line, RT: line, Alpha: 1}
	if fo.Start == "fixed" && ans.FixedPoint != nil {
		start = fp
	}
	tr, err := d.Integrate(start, fo.Duration, fo.Dt, fo.Every)
	if err != nil {
		var pe *fluid.ParamError
		if errors.As(err, &pe) {
			s.writeError(w, r, paramErrors(err, "fluid"))
			return
		}
		ans.Error = err.Error()
	}
	ans.Trajectory = tr
	s.writeFinite(w, r, ans)
}

// writeFinite answers v, or a 422 when the model produced a value JSON
// cannot carry (an infinity or NaN): never a half-written 200.
func (s *Server) writeFinite(w http.ResponseWriter, r *http.Request, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "params", "the model has no finite answer for these parameters: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// handleStabilityPage is the stability lab's page: the sliders at the
// paper's baseline and the two Fig. 9 scenarios its packet overlay runs.
func (s *Server) handleStabilityPage(w http.ResponseWriter, r *http.Request) {
	p := web.StabilityPage{Sliders: web.StabilitySliders(), Packet: map[string]json.RawMessage{}}
	for _, e := range scenarios.Library() {
		switch e.ID {
		case "qcn-averaging-350us":
			p.Packet["qcn"] = e.Source
		case "qcn-aimd-350us":
			p.Packet["qcn_aimd"] = e.Source
		}
	}
	s.render(w, r, web.StabilityView(p))
}

type apRequest struct {
	Config json.RawMessage `json:"config"`
	Step   *struct {
		Delay    float64 `json:"delay"`    // seconds
		Duration float64 `json:"duration"` // seconds
		Every    float64 `json:"every"`    // seconds
	} `json:"step"`
}

type apAnswer struct {
	Config  fluid.APConfig              `json:"config"`
	Margins []fluid.APResult            `json:"margins"`
	Delay   float64                     `json:"delay"`
	Steps   map[string]*fluid.StepTrace `json:"steps"`
}

// handleStabilityAP is the Averaging Principle sandbox: every
// controller's largest stable delay and their step responses at one delay.
func (s *Server) handleStabilityAP(w http.ResponseWriter, r *http.Request) {
	var req apRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg := fluid.DefaultAPConfig()
	if err := decodeOnto(req.Config, &cfg, "config"); err != nil {
		s.writeError(w, r, err)
		return
	}
	delay, duration, every := 8.0, 80.0, 0.1
	if req.Step != nil {
		if req.Step.Delay != 0 {
			delay = req.Step.Delay
		}
		if req.Step.Duration != 0 {
			duration = req.Step.Duration
		}
		if req.Step.Every != 0 {
			every = req.Step.Every
		}
	}
	if !(every > 0) || duration/every > maxFluidSamples {
		s.writeError(w, r, limitError(http.StatusUnprocessableEntity, "fluid-samples", "step.every",
			"want at most %d samples, got a %g s run sampled every %g s", maxFluidSamples, duration, every))
		return
	}
	m, err := fluid.APMargins(cfg)
	if err != nil {
		s.writeError(w, r, paramErrors(err, "config"))
		return
	}
	ans := apAnswer{Config: cfg, Margins: m, Delay: delay, Steps: map[string]*fluid.StepTrace{}}
	for _, c := range []string{fluid.APStandard, fluid.APAveraged, fluid.APPD} {
		tr, err := cfg.StepResponse(c, delay, duration, every)
		if err != nil {
			s.writeError(w, r, paramErrors(err, "step"))
			return
		}
		ans.Steps[c] = tr
	}
	s.writeFinite(w, r, ans)
}

type rcpRequest struct {
	Config   json.RawMessage `json:"config"`
	MaxRTTMs float64         `json:"maxRttMs"`
	Trace    *struct {
		RTT      float64 `json:"rtt"`      // seconds
		Duration float64 `json:"duration"` // seconds
	} `json:"trace"`
}

type rcpAnswer struct {
	Config  fluid.RCPConfig            `json:"config"`
	Margins []fluid.RCPResult          `json:"margins"`
	RTT     float64                    `json:"rtt"`
	Traces  map[string]*fluid.RCPTrace `json:"traces"`
}

// handleStabilityRCP is the RCP module: each variant's largest stable RTT
// and the total sending rate of each at one RTT.
func (s *Server) handleStabilityRCP(w http.ResponseWriter, r *http.Request) {
	var req rcpRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg := fluid.DefaultRCPConfig()
	if err := decodeOnto(req.Config, &cfg, "config"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.MaxRTTMs == 0 {
		req.MaxRTTMs = 600
	}
	if !(req.MaxRTTMs > 0 && req.MaxRTTMs <= 2000) {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "maxRttMs", "between 0 and 2000 ms, got %g", req.MaxRTTMs))
		return
	}
	rtt, duration := 0.24, 30.0
	if req.Trace != nil {
		if req.Trace.RTT != 0 {
			rtt = req.Trace.RTT
		}
		if req.Trace.Duration != 0 {
			duration = req.Trace.Duration
		}
	}
	if !(duration > 0 && duration <= 600) {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "trace.duration", "between 0 and 600 s, got %g", duration))
		return
	}
	m, err := fluid.RCPMargins(cfg, req.MaxRTTMs/1e3)
	if err != nil {
		s.writeError(w, r, paramErrors(err, "config"))
		return
	}
	ans := rcpAnswer{Config: cfg, Margins: m, RTT: rtt, Traces: map[string]*fluid.RCPTrace{}}
	for _, v := range []string{fluid.RCPBasic, fluid.RCPAP, fluid.RCPAP2, fluid.RCPPD} {
		tr, err := cfg.Simulate(v, rtt, duration, duration/1000)
		if err != nil {
			s.writeError(w, r, paramErrors(err, "trace"))
			return
		}
		ans.Traces[v] = tr
	}
	s.writeFinite(w, r, ans)
}
