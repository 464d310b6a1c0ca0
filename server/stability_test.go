package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
)

// The stability API answers the same numbers as sim/fluid and the CLI
// (τ* 249.07, exact 250.92, τ̂ 216.27 µs at the baseline), with the
// paper's beside them, and names the field of every bad input.
func TestStabilityAPI(t *testing.T) {
	s := newTestServer(t, Config{})
	var q struct {
		Margins struct {
			TauStarUs, ExactMarginUs, TauHatUs, PhaseMarginDeg float64
			StableQcn                                          bool
		} `json:"margins"`
		Bode map[string]struct {
			Omega          []float64 `json:"omega"`
			DelayMarginS   float64   `json:"delayMarginS"`
			PhaseMarginDeg float64   `json:"phaseMarginDeg"`
		} `json:"bode"`
		Roots map[string][]struct{ Re, Im float64 } `json:"roots"`
		Fluid map[string]struct {
			T     []float64 `json:"t"`
			Q     []float64 `json:"q"`
			Error string    `json:"error"`
		} `json:"fluid"`
		Paper map[string]float64 `json:"paper"`
	}
	s.must(http.StatusOK, "POST", "/api/stability/qcn", map[string]any{"points": 100}, &q)
	m := q.Margins
	near := func(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
	if !near(m.TauStarUs, 249.07, 0.05) || !near(m.ExactMarginUs, 250.92, 0.05) || !near(m.TauHatUs, 216.27, 0.05) || m.StableQcn {
		t.Errorf("baseline margins %+v", m)
	}
	if q.Paper["tauStarUs"] != 249 || q.Paper["tauHatUs"] != 189 {
		t.Errorf("paper numbers %v", q.Paper)
	}
	if b := q.Bode["qcn"]; len(b.Omega) != 100 || !near(b.DelayMarginS*1e6, m.ExactMarginUs, 1e-6) || !near(b.PhaseMarginDeg, m.PhaseMarginDeg, 1e-9) {
		t.Errorf("Bode data: %d points, delay margin %g s, phase margin %g", len(b.Omega), b.DelayMarginS, b.PhaseMarginDeg)
	}
	// unstable at 350 µs: the rightmost root is in the right half-plane
	if r := q.Roots["qcn"]; len(r) == 0 || r[0].Re <= 0 {
		t.Errorf("roots at 350 µs: %v", r)
	}
	// the default fluid run: 50 ms sampled every 20 µs
	if f := q.Fluid["qcn"]; len(f.T) != 2501 || f.Error != "" {
		t.Errorf("fluid run: %d samples, %q", len(f.T), f.Error)
	}
	s.must(http.StatusOK, "POST", "/api/stability/qcn", map[string]any{"params": map[string]any{"rtt": 100e-6}}, &q)
	if !q.Margins.StableQcn || q.Roots["qcn"][0].Re >= 0 {
		t.Errorf("at 100 µs: stable %v, rightmost root %v", q.Margins.StableQcn, q.Roots["qcn"][0])
	}

	var sw struct {
		Points []struct{ Value, TauStarUs, ExactMarginUs float64 } `json:"points"`
	}
	s.must(http.StatusOK, "POST", "/api/stability/sweep", map[string]any{"param": "n", "from": 5, "to": 20, "points": 4}, &sw)
	if len(sw.Points) != 4 || sw.Points[1].Value != 10 || !near(sw.Points[1].TauStarUs, 249.07, 0.05) {
		t.Errorf("sweep %+v", sw.Points)
	}
	var dc struct {
		FixedPoint *struct{ Rc float64 } `json:"fixedPoint"`
		Trajectory struct{ T []float64 } `json:"trajectory"`
	}
	s.must(http.StatusOK, "POST", "/api/stability/dcqcn", map[string]any{}, &dc)
	if dc.FixedPoint == nil || !near(dc.FixedPoint.Rc*8*1000, 20e9, 1) || len(dc.Trajectory.T) != 2001 {
		t.Errorf("DCQCN: fixed point %+v, %d samples", dc.FixedPoint, len(dc.Trajectory.T))
	}
	var mg map[string]any
	s.must(http.StatusOK, "POST", "/api/stability/margins", map[string]any{"params": map[string]any{"c": 40e9}}, &mg)
	if got := mg["tauStarUs"].(float64); !near(got, 62.3, 0.4) {
		t.Errorf("40 Gbps: τ* %g", got)
	}

	for _, tc := range []struct {
		path  string
		body  string
		field string
	}{
		{"/api/stability/qcn", `{"params": {"rtt": -1}}`, "params.rtt"},
		{"/api/stability/qcn", `{"params": {"c": 0}}`, "params.c"},
		{"/api/stability/qcn", `{"params": {"ps": 1.5}}`, "params.ps"},
		{"/api/stability/qcn", `{"params": {"n": "ten"}}`, "params.n"},
		{"/api/stability/qcn", `{"params": {"colour": 1}}`, "params.colour"},
		{"/api/stability/qcn", `{"params": 5}`, "params"},
		{"/api/stability/qcn", `{"params": {"rtt": 106}, "fluid": {"duration": 0.001}}`, "params.rtt"},
		{"/api/stability/dcqcn", `{"params": {"delay": 100}, "fluid": {"duration": 0.001}}`, "params.delay"},
		{"/api/stability/qcn", `{"points": 1}`, "points"},
		{"/api/stability/qcn", `{"fluid": {"duration": 10, "dt": 1e-7}}`, "fluid.duration"},
		{"/api/stability/qcn", `{"fluid": {"every": 1e-6}}`, "fluid.every"},
		{"/api/stability/qcn", `{"fluid": {"start": "middle"}}`, "fluid.start"},
		{"/api/stability/sweep", `{"param": "buffer", "from": 1, "to": 2}`, "param"},
		{"/api/stability/sweep", `{"param": "ps", "from": 0.01, "to": 2, "points": 3}`, "to"},
		{"/api/stability/sweep", `{"param": "n", "from": 0, "to": 10}`, "from"},
		{"/api/stability/dcqcn", `{"params": {"beta": 0}}`, "params.beta"},
		{"/api/stability/dcqcn", `{"params": {"kmin": 300000}}`, "params.kmin"},
		{"/api/stability/ap", `{"config": {"t": 0}}`, "config.t"},
		{"/api/stability/ap", `{"config": {"delayAt": "middle"}}`, "config.delayAt"},
		{"/api/stability/rcp", `{"config": {"flows": 0}}`, "config.flows"},
		{"/api/stability/rcp", `{"maxRttMs": -5}`, "maxRttMs"},
	} {
		code, body := s.do("POST", tc.path, tc.body)
		var e apiError
		if err := json.Unmarshal(body, &e); err != nil || code != http.StatusUnprocessableEntity || e.Field != tc.field {
			t.Errorf("%s %s: %d, field %q, want 422 naming %q: %s", tc.path, tc.body, code, e.Field, tc.field, body)
		}
	}
	if code, body := s.do("POST", "/api/stability/qcn", `{"params": `); code != http.StatusBadRequest || !strings.Contains(string(body), "JSON") {
		t.Errorf("truncated JSON: %d %s", code, body)
	}
}

// The AP and RCP routes give the CLI's lists.
func TestStabilityAPAndRCPAPI(t *testing.T) {
	s := newTestServer(t, Config{})
	var ap struct {
		Margins []struct {
			Name            string
			MaxStableDelayS float64
		} `json:"margins"`
		Steps map[string]struct{ T, Y []float64 } `json:"steps"`
	}
	s.must(http.StatusOK, "POST", "/api/stability/ap", map[string]any{"step": map[string]any{"delay": 8, "duration": 40, "every": 0.5}}, &ap)
	if len(ap.Margins) < 3 || ap.Margins[0].Name != "standard" || !(ap.Margins[0].MaxStableDelayS < 8) || math.Abs(ap.Margins[1].MaxStableDelayS-15) > 0.5 {
		t.Errorf("AP margins %+v", ap.Margins)
	}
	if st := ap.Steps["ap"]; len(st.T) != 81 {
		t.Errorf("AP step response: %d samples", len(st.T))
	}
	var rcp struct {
		Margins []struct {
			Name           string
			MaxStableRttMs float64
		} `json:"margins"`
		Traces map[string]struct{ T, Rate []float64 } `json:"traces"`
	}
	s.must(http.StatusOK, "POST", "/api/stability/rcp", map[string]any{"trace": map[string]any{"rtt": 0.1, "duration": 10}}, &rcp)
	if len(rcp.Margins) != 4 || rcp.Margins[2].Name != "ap2-rcp" || len(rcp.Traces) != 4 || len(rcp.Traces["rcp"].T) < 1000 {
		t.Errorf("RCP: %+v, %d traces", rcp.Margins, len(rcp.Traces))
	}
}
