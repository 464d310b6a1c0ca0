package scenarios

import (
	"math"
	"testing"
)

// The published means (cdf/README.md): trapezoid rule, rounded to bytes.
func TestCDFMeans(t *testing.T) {
	want := map[string]float64{
		"websearch":                       1_711_250,
		"fbhadoop":                        120_421,
		"alistorage":                      40_870,
		"datamining":                      5_036_535,
		"cachefollower":                   609_883,
		"webserver":                       91_343,
		"datamining_vl2cdf":               12_658_199,
		"cachefollower_homa_intracluster": 687_657,
		"webserver_homa_intracluster":     62_480,
	}
	if len(CDFNames()) != len(want) {
		t.Fatalf("CDFNames() = %v", CDFNames())
	}
	for _, name := range CDFNames() {
		c, err := LoadCDF(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Mean(); math.Abs(got-want[name]) > 1 {
			t.Errorf("%s mean = %.2f, want %.0f", name, got, want[name])
		}
	}
	ws, _ := LoadCDF("websearch")
	if got := ws.Mean(); math.Abs(got-1_711_250) > 1e-6 {
		t.Errorf("websearch mean = %.6f, want 1711250 exactly", got)
	}
	if len(ws.Points) != 12 {
		t.Errorf("websearch has %d points, want 12", len(ws.Points))
	}
}

func TestCDFQuantileAndSample(t *testing.T) {
	ws, _ := LoadCDF("websearch")
	tests := []struct{ p, want float64 }{
		{0, 0}, {0.15, 10000}, {0.5, 50000 + 30000.0/13*10}, {0.9, 5e6}, {0.99, 23_333_333.333333}, {1, 30e6},
		{0.075, 5000},
	}
	for _, tt := range tests {
		if got := ws.Quantile(tt.p); math.Abs(got-tt.want) > 1e-3 {
			t.Errorf("Quantile(%g) = %f, want %f", tt.p, got, tt.want)
		}
	}
	if got := ws.Sample(0); got != 1 {
		t.Errorf("Sample(0) = %d, want 1 (sizes are at least one byte)", got)
	}
	if got := ws.Sample(0.5); got != 73077 {
		t.Errorf("Sample(0.5) = %d, want 73077", got)
	}
	if _, err := LoadCDF("nope"); err == nil {
		t.Error("LoadCDF(nope) succeeded")
	}
}

func TestNewCDFRules(t *testing.T) {
	bad := [][]CDFPoint{
		{{0, 0}},
		{{0, 10}, {100, 100}},
		{{0, 0}, {100, 90}},
		{{0, 0}, {100, 50}, {50, 100}},
		{{0, 0}, {100, 50}, {200, 50}, {300, 100}},
		{{-1, 0}, {100, 100}},
		{{0, 0}, {math.Inf(1), 100}},
	}
	for _, pts := range bad {
		if _, err := NewCDF("", pts); err == nil {
			t.Errorf("NewCDF(%v) succeeded", pts)
		}
	}
	if _, err := NewCDF("x", []CDFPoint{{100, 0}, {200, 100}}); err != nil {
		t.Errorf("NewCDF: %v", err)
	}
}
