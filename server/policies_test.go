package server

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"cclab/cc/fdcc"
)

// policyFile is a fresh policy file of obs observations.
func policyFile(t testing.TB, obs int) []byte {
	t.Helper()
	hist, limit := 8, 2.0
	if obs == 2 {
		hist, limit = 1, 1
	}
	td, err := fdcc.NewTD3(fdcc.Arch{Obs: obs, Hist: hist, Hidden: 4, ActLimit: limit}, fdcc.DefaultTD3Config(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fdcc.SavePolicy(&buf, td.Policy(), map[string]string{"note": "test"}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// withNaN puts a NaN in the first value of tensor name.
func withNaN(t *testing.T, file []byte, name string) []byte {
	t.Helper()
	n := binary.LittleEndian.Uint64(file)
	var h map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	var info struct {
		DataOffsets [2]int `json:"data_offsets"`
	}
	if err := json.Unmarshal(h[name], &info); err != nil {
		t.Fatalf("tensor %s: %v", name, err)
	}
	out := bytes.Clone(file)
	binary.LittleEndian.PutUint64(out[8+int(n)+info.DataOffsets[0]:], math.Float64bits(math.NaN()))
	return out
}

type policyListItem struct {
	ID, Name, Algorithm, Source string
	Builtin                     bool
	Size                        int64
	Meta                        map[string]string
}

func TestPolicyUpload(t *testing.T) {
	s := newTestServer(t, Config{})
	fd, rl := policyFile(t, 8), policyFile(t, 2)
	const lstm = "actor.mem_lstm_layers.0.weight_ih_l0"
	for _, tc := range []struct {
		name, query string
		body        []byte
		status      int
		field, want string
	}{
		{"fdcc", "?name=mine&algorithm=fdcc", fd, 201, "", ""},
		{"rlcc, algorithm from the form's absence: the file does not say", "?name=r1", rl, 422, "algorithm", "fdcc or rlcc"},
		{"rlcc", "?name=r1&algorithm=rlcc", rl, 201, "", ""},
		{"taken", "?name=mine&algorithm=fdcc", fd, 409, "name", "stored already"},
		{"wrong observation size", "?name=x&algorithm=fdcc", rl, 400, "file", "tensor actor.mem_pre_lstm_layers.0.weight: observation size 2"},
		{"wrong observation size, rlcc", "?name=x&algorithm=rlcc", fd, 400, "file", "tensor actor.mem_pre_lstm_layers.0.weight: observation size 8"},
		{"truncated", "?name=x&algorithm=fdcc", fd[:len(fd)-3], 400, "file", "tensor"},
		{"NaN", "?name=x&algorithm=fdcc", withNaN(t, fd, lstm), 400, "file", "tensor " + lstm},
		{"not safetensors", "?name=x&algorithm=fdcc", []byte("hello"), 400, "file", "policy"},
		{"empty", "?name=x&algorithm=fdcc", nil, 400, "file", "empty"},
		{"bad name", "?name=a/b&algorithm=fdcc", fd, 422, "name", "1 to 64"},
		{"long name", "?name=" + strings.Repeat("a", 65) + "&algorithm=fdcc", fd, 422, "name", "1 to 64"},
		{"reserved name", "?name=default&algorithm=fdcc", fd, 422, "name", "shipped"},
		{"bad algorithm", "?name=x&algorithm=hpcc", fd, 422, "algorithm", "fdcc or rlcc"},
		{"too big", "?name=x&algorithm=fdcc", make([]byte, maxPolicyBytes+1), 413, "file", "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do("POST", "/api/policies"+tc.query, tc.body, "Content-Type", "application/octet-stream")
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, data)
			}
			if tc.status >= 400 {
				var e apiErr
				if err := json.Unmarshal(data, &e); err != nil {
					t.Fatal(err)
				}
				if e.Field != tc.field || !strings.Contains(e.Error, tc.want) {
					t.Fatalf("error %s, want field %q and %q", data, tc.field, tc.want)
				}
			}
		})
	}
	// multipart, as the page's form sends it
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("name", "from-form")
	mw.WriteField("algorithm", "fdcc")
	fw, _ := mw.CreateFormFile("file", "p.safetensors")
	fw.Write(fd)
	mw.Close()
	if code, data := s.do("POST", "/api/policies", mp.Bytes(), "Content-Type", mw.FormDataContentType()); code != 201 {
		t.Fatalf("multipart upload: %d %s", code, data)
	}

	var list []policyListItem
	s.must(200, "GET", "/api/policies", nil, &list)
	names := []string{}
	for _, p := range list {
		names = append(names, p.Name+"/"+p.Algorithm+"/"+p.Source)
	}
	want := "from-form/fdcc/upload r1/rlcc/upload mine/fdcc/upload"
	_, _, noShipped := fdcc.Shipped("fdcc")
	if noShipped == nil {
		want = "default/fdcc/shipped " + want
		if !list[0].Builtin {
			t.Errorf("the shipped policy is not marked builtin: %+v", list[0])
		}
		list = list[1:]
	}
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("policies %s, want %s", got, want)
	}
	if list[2].Meta["note"] != "test" || list[2].Size != int64(len(fd)) || list[2].Builtin {
		t.Errorf("list %+v", list)
	}
	// the file back, byte for byte; the shipped one loads
	code, file := s.do("GET", "/api/policies/"+list[2].ID+"/policy.safetensors", nil)
	if code != 200 || !bytes.Equal(file, fd) {
		t.Fatalf("download: %d, %d bytes, want %d", code, len(file), len(fd))
	}
	code, file = s.do("GET", "/api/policies/default/policy.safetensors", nil)
	if noShipped == nil {
		if _, _, err := fdcc.LoadPolicy(bytes.NewReader(file)); code != 200 || err != nil {
			t.Fatalf("the shipped policy's file: %d %v", code, err)
		}
	} else if code != 404 {
		t.Fatalf("no shipped policy, yet its file answers %d", code)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"DELETE", "/api/policies/default", 403},
		{"DELETE", "/api/policies/nope", 404},
		{"GET", "/api/policies/nope/policy.safetensors", 404},
		{"DELETE", "/api/policies/" + list[0].ID, 204},
		{"GET", "/api/policies/" + list[0].ID, 404},
	} {
		if code, data := s.do(tc.method, tc.path, nil); code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, code, tc.status, data)
		}
	}
}

// TestRunWithStoredPolicy: a scenario names a stored policy in cc.policy;
// an unknown name, or one of the other algorithm, is an error at cc.policy.
func TestRunWithStoredPolicy(t *testing.T) {
	s := newTestServer(t, Config{})
	s.must(201, "POST", "/api/policies?name=mine&algorithm=fdcc", policyFile(t, 8), nil)
	s.must(201, "POST", "/api/policies?name=r&algorithm=rlcc", policyFile(t, 2), nil)
	// the lab's algorithm form lists the algorithm's stored policies
	for _, tc := range []struct {
		algo      string
		has, hasn []string
	}{
		{"fdcc", []string{`id="f-cc-policy"`, `<option value="">default (shipped)</option>`, `<option value="mine">`}, []string{`value="r"`}},
		{"rlcc", []string{`id="f-cc-policy"`, `<option value="r">`}, []string{`value="mine"`}},
		{"hpcc", nil, []string{`f-cc-policy`}},
	} {
		code, page := s.do("GET", "/ui/params?algo="+tc.algo, nil)
		if code != 200 {
			t.Fatalf("/ui/params?algo=%s: %d", tc.algo, code)
		}
		for _, w := range tc.has {
			if !strings.Contains(string(page), w) {
				t.Errorf("%s's form lacks %s", tc.algo, w)
			}
		}
		for _, w := range tc.hasn {
			if strings.Contains(string(page), w) {
				t.Errorf("%s's form has %s", tc.algo, w)
			}
		}
	}
	sc := smallScenario("learned", "fdcc", "")
	for _, tc := range []struct {
		name, algo, policy string
		status             int
		want               string
	}{
		{"unknown", "fdcc", "nope", 422, "no stored policy named \"nope\""},
		{"other algorithm", "fdcc", "r", 422, "trained for rlcc, not fdcc"},
		{"other algorithm, rlcc", "rlcc", "mine", 422, "trained for fdcc, not rlcc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/runs", "/api/scenarios/validate"} {
				body := any(map[string]any{"scenario": sc, "cc": map[string]any{"algorithm": tc.algo, "policy": tc.policy}})
				if path != "/api/runs" {
					doc := map[string]any{}
					for k, v := range sc {
						doc[k] = v
					}
					doc["cc"] = map[string]any{"algorithm": tc.algo, "policy": tc.policy}
					body = doc
				}
				code, data := s.do("POST", path, body)
				var e apiErr
				_ = json.Unmarshal(data, &e)
				if code != tc.status {
					t.Fatalf("%s: status %d, want %d: %s", path, code, tc.status, data)
				}
				if e.Field != "cc.policy" || !strings.Contains(e.Error, tc.want) {
					t.Fatalf("%s: %s, want %q at cc.policy", path, data, tc.want)
				}
			}
		})
	}
	id := s.startRun(map[string]any{"scenario": sc, "cc": map[string]any{"algorithm": "fdcc", "policy": "mine"}})
	r := s.waitStatus(id, 30*time.Second, "done", "failed")
	if r.Status != "done" {
		t.Fatalf("run with a stored policy: %s %s", r.Status, r.Error)
	}
}
