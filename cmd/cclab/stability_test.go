package main

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestStabilityMarginsCLI(t *testing.T) {
	ctx := context.Background()
	code, out, errs := runCLI(t, ctx, "stability", "margins", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{"tauStarUs": 249.07, "tauStarPrintedUs": 341.1, "tauHatUs": 216.27, "tauHatPaperUs": 189, "exactMarginUs": 250.92} {
		got, ok := m[key].(float64)
		if !ok || math.Abs(got-want) > 0.05 {
			t.Errorf("%s = %v, want %g", key, m[key], want)
		}
	}
	// --set with units: at 40 Gbps the margin is a quarter (the rate
	// constants scale with C)
	code, out, _ = runCLI(t, ctx, "stability", "margins", "--json", "--set", "c=40Gbps", "--set", "rtt=50us")
	if err := json.Unmarshal([]byte(out), &m); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if got := m["tauStarUs"].(float64); math.Abs(got-62.3) > 0.4 || m["stableQcn"] != true {
		t.Errorf("40 Gbps: τ* %g, stable at 50 µs %v", got, m["stableQcn"])
	}
	code, out, _ = runCLI(t, ctx, "stability", "margins")
	if code != exitOK || !strings.Contains(out, "τ* (Theorem 1)        249.07 µs") || !strings.Contains(out, "paper 189 µs") {
		t.Errorf("text output:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"stability"}, "want a subcommand: margins"},
		{[]string{"stability", "margins", "--set", "c=0Gbps"}, "C: the capacity must be positive"},
		{[]string{"stability", "margins", "--set", "rtt=-5us"}, "rtt"},
		{[]string{"stability", "margins", "--set", "foo=1"}, `no parameter "foo"`},
		{[]string{"stability", "margins", "--set", "n=ten"}, "n=ten"},
		{[]string{"stability", "margins", "--preset", "x"}, `no preset "x"`},
	} {
		code, _, errs := runCLI(t, ctx, tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errs, tc.err)
		}
	}
}
