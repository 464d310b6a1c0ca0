package web

import "encoding/json"

// StabilityPage is the stability lab's page data: the sliders (in the
// fluid model's base units: bits/s, seconds, packets) and the two Fig. 9
// scenarios the packet overlay runs.
type StabilityPage struct {
	Sliders []Slider                   `json:"sliders"`
	Packet  map[string]json.RawMessage `json:"packet"` // algorithm → scenario document
}

// Slider is one parameter of the QCN fluid model. Display = Value / Scale
// in Unit.
type Slider struct {
	Name  string  `json:"name"`
	Label string  `json:"label"`
	Help  string  `json:"help"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Value float64 `json:"value"`
	Scale float64 `json:"scale"`
	Unit  string  `json:"unit"`
	Int   bool    `json:"int,omitempty"`
}

// StabilitySliders are the paper's baseline (Remark 3, Fig. 9) and the
// ranges a student can explore.
func StabilitySliders() []Slider {
	return []Slider{
		{Name: "rtt", Label: "RTT τ", Help: "the feedback delay: congestion point → source → congestion point", Min: 10e-6, Max: 1000e-6, Value: 350e-6, Scale: 1e-6, Unit: "µs"},
		{Name: "n", Label: "N", Help: "sources sharing the bottleneck", Min: 1, Max: 100, Value: 10, Scale: 1, Int: true},
		{Name: "c", Label: "C", Help: "bottleneck capacity", Min: 1e9, Max: 100e9, Value: 10e9, Scale: 1e9, Unit: "Gbps"},
		{Name: "gd", Label: "G_d", Help: "decrease gain: a cut is R_C · G_d · F_b", Min: 1.0 / 512, Max: 1.0 / 16, Value: 1.0 / 128, Scale: 1},
		{Name: "w", Label: "w", Help: "weight of the queue's rate of change in F_b", Min: 0.25, Max: 8, Value: 2, Scale: 1},
		{Name: "ps", Label: "p_s", Help: "sampling probability of the congestion point", Min: 0.001, Max: 0.1, Value: 0.01, Scale: 1},
		{Name: "rai", Label: "R_AI", Help: "additive increase per byte-counter cycle", Min: 0.5e6, Max: 50e6, Value: 5e6, Scale: 1e6, Unit: "Mbps"},
		{Name: "qeq", Label: "Q_eq", Help: "the queue the congestion point aims at", Min: 1, Max: 200, Value: 22, Scale: 1, Unit: "packets"},
	}
}
