package scenarios

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"cclab/sim"
)

func TestApplySets(t *testing.T) {
	doc := []byte(`{"seed": 1, "topology": {"kind": "dumbbell", "hostLink": {"rate": "10Gbps"}}, "cc": {"algorithm": "none"},
		"workload": [{"kind": "flows", "flows": [{"src": "h0"}, {"src": "h1", "size": "1MB"}]}]}`)
	out, err := ApplySets(doc, []string{
		"cc.params.wr=10",                 // creates params
		"seed=3",                          // number
		`topology.hostLink.rate="40Gbps"`, // JSON string
		"topology.bottleneck.rate=25Gbps", // bare string, creates bottleneck
		"workload[0].flows[1].size=2MB",   // into lists
		`workload[1]={"kind":"incast"}`,   // append
		"workload[0].flows[0].start=null", // null
		"description=",                    // empty string
		"name=a=b",                        // only the first '=' splits
		"switch.int=false",                // bool
	})
	if err != nil {
		t.Fatal(err)
	}
	var errs errorList
	tree, err := decodeJSON(out, &errs)
	if err != nil {
		t.Fatal(err)
	}
	root := tree.(*object)
	get := func(path ...string) any {
		var cur any = root
		for _, k := range path {
			switch c := cur.(type) {
			case *object:
				cur, _ = c.get(k)
			case []any:
				var i int
				for _, ch := range k {
					i = i*10 + int(ch-'0')
				}
				cur = c[i]
			}
		}
		return cur
	}
	checks := []struct {
		path []string
		want string
	}{
		{[]string{"cc", "params", "wr"}, "10"},
		{[]string{"seed"}, "3"},
		{[]string{"topology", "hostLink", "rate"}, `"40Gbps"`},
		{[]string{"topology", "bottleneck", "rate"}, `"25Gbps"`},
		{[]string{"workload", "0", "flows", "1", "size"}, `"2MB"`},
		{[]string{"workload", "1", "kind"}, `"incast"`},
		{[]string{"workload", "0", "flows", "0", "start"}, "null"},
		{[]string{"description"}, `""`},
		{[]string{"name"}, `"a=b"`},
		{[]string{"switch", "int"}, "false"},
	}
	for _, c := range checks {
		if got := describe(get(c.path...)); got != c.want {
			t.Errorf("%v = %s, want %s", c.path, got, c.want)
		}
	}
	// the other keys keep their order
	if !strings.HasPrefix(string(out), "{\n  \"seed\": 3,\n  \"topology\"") {
		t.Errorf("key order changed:\n%s", out)
	}
}

func TestApplySetsErrors(t *testing.T) {
	doc := []byte(`{"seed": 1, "workload": [{"kind": "flows"}]}`)
	tests := []struct{ set, field string }{
		{"seed.x=1", "seed"},
		{"workload[3].kind=x", "workload[3]"},
		{"workload.kind=x", "workload"},
		{"seed[0]=1", "seed"},
		{"a..b=1", "a..b"},
		{"a[x]=1", "a[x]"},
		{"a[0=1", "a[0"},
		{"noequals", "noequals"},
		{"missing[0]=1", "missing"},
	}
	for _, tt := range tests {
		_, err := ApplySets(doc, []string{tt.set})
		var e *Error
		if !errors.As(err, &e) || e.Errors[0].Field != tt.field {
			t.Errorf("%s: err = %v, want one at %q", tt.set, err, tt.field)
		}
	}
	if _, err := ApplySets([]byte(`[1]`), []string{"a=1"}); err == nil {
		t.Error("ApplySets on a list succeeded")
	}
	if _, err := ApplySets([]byte(`{"a":1,"a":2}`), nil); err == nil {
		t.Error("ApplySets accepted a duplicate key")
	}
}

func TestSetAlgorithmAndSeed(t *testing.T) {
	out, err := SetAlgorithm([]byte(base), "none")
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, out)
	if s.CC.Algorithm != "none" || len(s.CC.Params) != 0 || s.CC.Preset != "" {
		t.Errorf("cc = %+v", s.CC)
	}
	out, err = SetAlgorithm([]byte(base), `we"ird`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(out); err == nil || !strings.Contains(err.Error(), `cc.algorithm: unknown algorithm "we\"ird"`) {
		t.Errorf("err = %v", err)
	}
	out, err = SetSeed([]byte(base), 18446744073709551615)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustParse(t, out); s.Seed != 18446744073709551615 {
		t.Errorf("seed = %d", s.Seed)
	}
}

func TestInsertParamsEvent(t *testing.T) {
	base := `{"name":"x","topology":{"kind":"dumbbell","senders":2,"hostLink":{"rate":"100Gbps","delay":"1us"}},
"cc":{"algorithm":"dcqcn"},"duration":"5ms",
"workload":[{"kind":"flows","flows":[{"src":"h0","dst":"h1","size":"1MB","start":"0s"}]}],
"events":[{"at":"1ms","params":{"ai":10}},{"at":"3ms","params":{"ai":20}}]}`
	tests := []struct {
		name   string
		at     sim.Time
		params string
		index  int
		err    string // expected field of the Parse error, "" for none
	}{
		{"before all", 500 * sim.Microsecond, `{"ai":5}`, 0, ""},
		{"same time as a scripted event comes first", sim.Millisecond, `{"ai":5}`, 0, ""},
		{"between", 2*sim.Millisecond + 1, `{"ai":5}`, 1, ""},
		{"after all", 4 * sim.Millisecond, `{"ai":5}`, 2, ""},
		{"unknown parameter named by path", 4 * sim.Millisecond, `{"nope":5}`, 2, "events[2].params.nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, idx, err := InsertParamsEvent([]byte(base), tc.at, []byte(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			if idx != tc.index {
				t.Fatalf("index %d, want %d", idx, tc.index)
			}
			s, err := Parse(doc)
			if tc.err != "" {
				var se *Error
				if !errors.As(err, &se) || se.Errors[0].Field != tc.err {
					t.Fatalf("error %v, want one on %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ev := s.Events[idx]
			if ev.At != tc.at || ev.Params["ai"] != 5 || len(s.Events) != 3 {
				t.Fatalf("event %+v (of %d)", ev, len(s.Events))
			}
		})
	}
	if _, _, err := InsertParamsEvent([]byte(base), 0, []byte(`[1]`)); err == nil {
		t.Fatal("a list of parameters was accepted")
	}
}

func TestLookupPath(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"cc": {"params": {"g": 0.5}}, "workload": [{"load": 0.3}, {"flows": [{"size": "1MB"}]}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path  string
		want  any
		found bool
		err   bool
	}{
		{"cc.params.g", 0.5, true, false},
		{"workload[0].load", 0.3, true, false},
		{"workload[1].flows[0].size", "1MB", true, false},
		{"cc.params.nope", nil, false, false},
		{"workload[2].load", nil, false, false},
		{"cc.params.g.deeper", nil, false, false},
		{"cc[0]", nil, false, false},
		{"", nil, false, true},
		{"workload[x]", nil, false, true},
		{"cc..g", nil, false, true},
	} {
		v, found, err := LookupPath(doc, tc.path)
		if (err != nil) != tc.err || found != tc.found || (found && v != tc.want) {
			t.Errorf("%q: %v %v %v, want %v %v err=%v", tc.path, v, found, err, tc.want, tc.found, tc.err)
		}
	}
}
