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
		"qcn_aimd":  "qcn send timer", // QCN's type: arms no timer (TestOptionalHooksUsed)
		"mpcc":      "",               // INT on ACKs, one QP per ACK
		"rcc":       "",               // the receiver's window on ACKs
		"tcp":       "timeout",        // NACKs on ACKs; the engine's retransmission timeout
		"fdcc":      "",               // INT and timestamps on ACKs
		"rlcc":      "",               // timestamps on ACKs
		// receiver-driven: grants and credits arrive as control packets
		"homa":        "class ctrl send",
		"expresspass": "ctrl send timer", // re-sends its credit request
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
		if _, ok := s.(TimeoutHandler); ok {
			got = append(got, "timeout")
		}
		if _, ok := s.(CtrlHandler); ok {
			got = append(got, "ctrl")
		}
		if _, ok := s.(DataClasser); ok {
			got = append(got, "class")
		}
		sort.Strings(got)
		if g := strings.Join(got, " "); g != w {
			t.Errorf("%s implements %q, want %q", a.Name, g, w)
		}
	}
}

// The hooks in TestOptionalHooks' table are used: a CNPHandler reacts to a
// CNP and a QCNHandler to feedback (its rate, or a timer armed), a
// TimeoutHandler to a timeout (its window), a Sampler reports a gauge, and a sender that arms a timer is a TimerHandler (the
// engine would drop its timers otherwise). Each algorithm is driven by the
// same script: sends, ACKs carrying ECN marks, a CNP flag and one INT hop,
// then the optional events it takes.
func TestOptionalHooksUsed(t *testing.T) {
	// qcn_aimd is QCN's sender type with the timer off: it has the hook
	// and never arms it
	noTimer := map[string]bool{"qcn_aimd": true}
	const lineRate = 100e9
	info := FlowInfo{ID: 1, Size: 1e9, LineRate: lineRate, BaseRTT: 10 * Microsecond, MaxBDP: 125_000,
		MTU: 1000, Header: 48, Hops: 1}
	for _, a := range Algorithms() {
		t.Run(a.Name, func(t *testing.T) {
			p, errs := a.Resolve("", nil, lineRate)
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			fresh := func() (Sender, *scriptEnv) {
				s, env := a.NewSender(info, p), newEnv()
				env.now = Microsecond
				s.Start(env)
				return s, env
			}
			// the ACK-driven script
			s, env := fresh()
			_, isTimer := s.(TimerHandler)
			send, _ := s.(SendObserver)
			hop := []IntHop{{Qlen: 50_000, Rate: lineRate, Flows: 2}}
			for i := int64(1); i <= 50; i++ {
				env.now += Microsecond
				if send != nil {
					send.OnSend(env, 1000, 1048, false)
				}
				hop[0].TxBytes, hop[0].TS = i*1048, env.now
				s.OnAck(env, &Ack{Seq: i * 1000, NewlyAcked: 1000, Packets: 1, ECNMarked: 1, CNP: true,
					SentAt: env.now - 12*Microsecond, INT: hop, SndNxt: (i + 10) * 1000, SndUna: i * 1000})
			}
			if sm, ok := s.(Sampler); ok {
				clear(env.gauges)
				sm.OnSample(env)
				if len(env.gauges) == 0 {
					t.Error("OnSample reported no gauge")
				}
			}
			armed := env.arms > 0

			// each optional event on a fresh sender
			if _, ok := s.(CNPHandler); ok {
				s, env := fresh()
				rate, arms := env.rate, env.arms
				env.now += Microsecond
				s.(CNPHandler).OnCNP(env)
				if env.rate == rate && env.arms == arms {
					t.Error("OnCNP changed neither the rate nor a timer")
				}
				armed = armed || env.arms > arms
			}
			if _, ok := s.(QCNHandler); ok {
				s, env := fresh()
				rate, arms := env.rate, env.arms
				env.now += Microsecond
				s.(QCNHandler).OnQCN(env, QCNFeedback{Fb: 20})
				if env.rate == rate {
					t.Error("OnQCN left the rate unchanged")
				}
				armed = armed || env.arms > arms
			}
			if _, ok := s.(TimeoutHandler); ok {
				s, env := fresh()
				window := env.window
				env.now += Microsecond
				s.(TimeoutHandler).OnTimeout(env, Timeout{SndUna: 0, SndMax: 10_000})
				if env.window == window {
					t.Error("OnTimeout left the window unchanged")
				}
			}
			switch {
			case armed && !isTimer:
				t.Error("arms a timer but is not a TimerHandler: the engine would drop its timers")
			case !armed && isTimer && !noTimer[a.Name]:
				t.Error("is a TimerHandler but the script armed no timer")
			case armed && noTimer[a.Name]:
				t.Error("arms a timer: remove it from noTimer")
			}
		})
	}
}
