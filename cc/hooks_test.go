package cc

import (
	"sort"
	"strings"
	"testing"
)

// Which optional hooks each algorithm's sender implements: the engine
// delivers CNPs, QCN feedback and timers only to senders that have the
// hook, so a hook lost in a refactor would silently stop the algorithm
// reacting. Every registered algorithm must be in the table.
func TestOptionalHooks(t *testing.T) {
	want := map[string]string{
		"none":      "",
		"dcqcn":     "cnp sample timer",
		"dolce":     "cnp sample send timer",
		"dolceplus": "sample send", // paced by the engine; no CNP, no timer
		"timely":    "",            // ACKs alone: RTT samples
		"dctcp":     "",            // ECN echoes on ACKs
		"hpcc":      "",            // INT on ACKs
		"qcn":       "qcn send timer",
		"qcn_aimd":  "qcn send timer",
		"mpcc":      "", // INT on ACKs, one QP per ACK
		"rcc":       "", // the receiver's window on ACKs
	}
	for _, a := range Algorithms() {
		w, ok := want[a.Name]
		if !ok {
			t.Errorf("%s: not in the table: add the hooks it implements", a.Name)
			continue
		}
		p, errs := a.Resolve("", nil, 100e9)
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		s := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 100_000}, p)
		var got []string
		if _, ok := s.(CNPHandler); ok {
			got = append(got, "cnp")
		}
		if _, ok := s.(QCNHandler); ok {
			got = append(got, "qcn")
		}
		if _, ok := s.(TimerHandler); ok {
			got = append(got, "timer")
		}
		if _, ok := s.(Sampler); ok {
			got = append(got, "sample")
		}
		if _, ok := s.(SendObserver); ok {
			got = append(got, "send")
		}
		sort.Strings(got)
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s implements %q, want %q", a.Name, g, w)
		}
	}
}
