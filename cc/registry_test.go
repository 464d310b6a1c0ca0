package cc

import (
	"strings"
	"testing"
)

// Every registry entry is self-consistent: defaults and preset values are in
// range, presets name real parameters, names are unique.
func TestRegistryConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Algorithms() {
		if seen[a.Name] {
			t.Errorf("algorithm %q registered twice", a.Name)
		}
		seen[a.Name] = true
		if a.NewSender == nil || a.Title == "" || a.Help == "" {
			t.Errorf("%s: needs a sender, a title and help", a.Name)
		}
		for _, p := range a.Param {
			if err := p.Check(p.Default); err != nil {
				t.Errorf("%s.%s default: %v", a.Name, p.Name, err)
			}
			if p.Help == "" || p.Kind == "" {
				t.Errorf("%s.%s: needs a kind and help", a.Name, p.Name)
			}
		}
		for _, pr := range a.Presets {
			for name, v := range pr.Values {
				p, ok := a.FindParam(name)
				if !ok {
					t.Errorf("%s preset %s: unknown parameter %s", a.Name, pr.Name, name)
					continue
				}
				if err := p.Check(v); err != nil {
					t.Errorf("%s preset %s: %s: %v", a.Name, pr.Name, name, err)
				}
			}
		}
	}
}

func TestResolve(t *testing.T) {
	a, _ := Lookup("none")
	cases := []struct {
		preset    string
		overrides map[string]float64
		want      float64
		err       string
	}{
		{"", nil, 1, ""},
		{"nowindow", nil, 0, ""},
		{"nowindow", map[string]float64{"windowBDPs": 3}, 3, ""},
		{"", map[string]float64{"windowBDPs": -1}, 1, "windowBDPs: -1 out of range [0, 1000]"},
		{"", map[string]float64{"wq": 1}, 1, "wq: unknown parameter of none"},
		{"fast", nil, 1, `preset: unknown preset "fast" for none`},
	}
	for _, c := range cases {
		p, errs := a.Resolve(c.preset, c.overrides, 100e9)
		if c.err == "" {
			if len(errs) > 0 || p.Get("windowBDPs") != c.want {
				t.Errorf("%q %v: got %v %v", c.preset, c.overrides, p, errs)
			}
			continue
		}
		if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), c.err) {
			t.Errorf("%q %v: errors %v, want %q", c.preset, c.overrides, errs, c.err)
		}
	}
}

// none: line rate, window = windowBDPs × max BDP (0: none), changed live.
func TestNone(t *testing.T) {
	a, _ := Lookup("none")
	p, _ := a.Resolve("", nil, 100e9)
	s := a.NewSender(FlowInfo{MaxBDP: 153_000}, p)
	env := newEnv()
	s.Start(env)
	if env.rate != Unlimited || env.window != 153_000 {
		t.Fatalf("start: rate %d window %d", env.rate, env.window)
	}
	s.OnAck(env, &Ack{ECNMarked: 5, CNP: true})
	if _, ok := s.(CNPHandler); ok {
		t.Fatal("none handles CNPs")
	}
	if env.rate != Unlimited || env.window != 153_000 {
		t.Fatal("none reacted to congestion signals")
	}
	if err := s.SetParam(env, "windowBDPs", 0.5); err != nil || env.window != 76_500 {
		t.Fatalf("windowBDPs 0.5: window %d, err %v", env.window, err)
	}
	if err := s.SetParam(env, "windowBDPs", 0); err != nil || env.window != Unlimited {
		t.Fatalf("windowBDPs 0: window %d, err %v", env.window, err)
	}
	if err := s.SetParam(env, "wq", 1); err == nil {
		t.Fatal("unknown parameter accepted")
	}
}
