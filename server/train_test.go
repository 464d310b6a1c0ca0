package server

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"cclab/cc/fdcc"
)

type trainJob struct {
	ID, Name, Algo, Status, Error, Policy string
	Episode, Episodes, Stage              int
	Interrupted                           bool
	Config                                struct {
		Episodes, Hidden, StageEpisodes, Updates, EvalEvery int
		Size                                                int64
		Stages                                              []int
		Method                                              string
	}
	Curve []struct {
		Episode    int
		FanIn      int
		Reward     *float64
		CriticLoss *float64
	}
}

// tinyTraining is a training job of two 2-to-1 episodes of 20 KB flows:
// well under a second.
func tinyTraining(name string) map[string]any {
	return map[string]any{"algo": "fdcc", "name": name, "episodes": 2, "stages": "2", "stageEpisodes": 2,
		"size": "20KB", "hidden": 8, "updates": 2, "evalEvery": 0}
}

func (s *testServer) waitTraining(id string, timeout time.Duration, want ...string) trainJob {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var j trainJob
		s.must(200, "GET", "/api/train/"+id, nil, &j)
		for _, w := range want {
			if j.Status == w {
				return j
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("training job %s is %s after %v, want %v (error %q)", id, j.Status, timeout, want, j.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTrainingJob: a tiny training job runs to done, its learning curve
// and policy are served, and a run names the policy in cc.policy.
func TestTrainingJob(t *testing.T) {
	s := newTestServer(t, Config{})
	var j trainJob
	s.must(201, "POST", "/api/train", tinyTraining("tiny"), &j)
	if j.Status != "queued" && j.Status != "running" || j.Config.Size != 20_000 || j.Config.Hidden != 8 || len(j.Config.Stages) != 1 || j.Config.Method != "td3" {
		t.Fatalf("created %+v", j)
	}
	j = s.waitTraining(j.ID, 60*time.Second, "done", "failed", "cancelled")
	if j.Status != "done" || j.Episode != 2 || j.Stage != 2 || len(j.Curve) != 1 || j.Policy == "" || j.Interrupted {
		t.Fatalf("job %+v", j)
	}
	if j.Curve[0].Episode != 2 || j.Curve[0].Reward == nil {
		t.Errorf("curve %+v", j.Curve)
	}
	code, data := s.do("GET", "/api/train/"+j.ID+"/curve.csv", nil)
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if code != 200 || err != nil || len(rows) != 2 || rows[0][0] != "episode" || rows[1][0] != "2" {
		t.Fatalf("curve.csv: %d %v %q", code, err, data)
	}
	var list []policyListItem
	s.must(200, "GET", "/api/policies", nil, &list)
	var found *policyListItem
	for i := range list {
		if list[i].Name == "tiny" {
			found = &list[i]
		}
	}
	if found == nil || found.ID != j.Policy || found.Source != j.ID || found.Algorithm != "fdcc" || found.Meta["episodes"] != "2" || found.Meta["interrupted"] != "" {
		t.Fatalf("stored policy %+v of %+v", found, list)
	}
	_, file := s.do("GET", "/api/policies/"+j.Policy+"/policy.safetensors", nil)
	if p, _, err := fdcc.LoadPolicy(bytes.NewReader(file)); err != nil || p.Arch().Hidden != 8 || p.Arch().Obs != 8 {
		t.Fatalf("the stored file: %v", err)
	}
	var jobs []trainJob
	s.must(200, "GET", "/api/train", nil, &jobs)
	if len(jobs) != 1 || jobs[0].ID != j.ID || jobs[0].Curve != nil {
		t.Errorf("list %+v", jobs)
	}
	// the name is taken now
	if code, data := s.do("POST", "/api/train", tinyTraining("tiny")); code != 409 || !strings.Contains(string(data), `"name"`) {
		t.Errorf("a second job storing as tiny: %d %s", code, data)
	}
	if code, _ := s.do("POST", "/api/train/"+j.ID+"/cancel", nil); code != 409 {
		t.Errorf("cancelling a finished job: %d", code)
	}
	id := s.startRun(map[string]any{"scenario": smallScenario("learned", "fdcc", ""), "cc": map[string]any{"algorithm": "fdcc", "policy": "tiny"}})
	if r := s.waitStatus(id, 30*time.Second, "done", "failed"); r.Status != "done" {
		t.Fatalf("run with the trained policy: %s %s", r.Status, r.Error)
	}
	// its page names the policy and draws the topology (the page resolves
	// the policy as the run did)
	if code, page := s.do("GET", "/r/"+id, nil); code != 200 || !strings.Contains(string(page), "topo-svg") ||
		!strings.Contains(string(page), ">tiny<") {
		t.Fatalf("run page: %d", code)
	}
}

// TestTrainingCancel: a running job cancelled after a round stores its
// policy marked interrupted; a queued one never starts and stores none.
func TestTrainingCancel(t *testing.T) {
	s := newTestServer(t, Config{})
	long := tinyTraining("long")
	long["episodes"] = 2000
	var a, b trainJob
	s.must(201, "POST", "/api/train", long, &a)
	s.must(201, "POST", "/api/train", tinyTraining("second"), &b)
	if b.Status != "queued" {
		t.Fatalf("a second job is %s while one trains, want queued", b.Status)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var j trainJob
		s.must(200, "GET", "/api/train/"+a.ID, nil, &j)
		if j.Episode > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no round played: %+v", j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.must(200, "POST", "/api/train/"+b.ID+"/cancel", nil, nil)
	s.must(200, "POST", "/api/train/"+a.ID+"/cancel", nil, nil)
	ja := s.waitTraining(a.ID, 30*time.Second, "cancelled", "failed", "done")
	jb := s.waitTraining(b.ID, time.Second, "cancelled", "failed", "done")
	if ja.Status != "cancelled" || !ja.Interrupted || ja.Policy == "" || ja.Episode == 0 {
		t.Fatalf("cancelled running job %+v", ja)
	}
	if jb.Status != "cancelled" || jb.Policy != "" || jb.Episode != 0 {
		t.Fatalf("cancelled queued job %+v", jb)
	}
	var list []policyListItem
	s.must(200, "GET", "/api/policies", nil, &list)
	n := 0
	for _, p := range list {
		switch p.Name {
		case "long":
			n++
			if p.Meta["interrupted"] != "true" || p.Meta["episodes_planned"] != "2000" {
				t.Errorf("interrupted policy's metadata %v", p.Meta)
			}
		case "second":
			t.Errorf("the queued job stored a policy")
		}
	}
	if n != 1 {
		t.Errorf("policies %+v", list)
	}
}

func TestTrainingErrors(t *testing.T) {
	s := newTestServer(t, Config{})
	with := func(k string, v any) map[string]any {
		m := tinyTraining("x")
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"algo", with("algo", "hpcc"), 422, "algo"},
		{"no name", with("name", nil), 422, "name"},
		{"bad name", with("name", "a b"), 422, "name"},
		{"episodes over the cap", with("episodes", maxTrainEpisodes+1), 422, "episodes"},
		{"no episodes", with("episodes", 0), 422, "episodes"},
		{"hidden over the cap", with("hidden", 65), 422, "hidden"},
		{"size over the cap", with("size", "21MB"), 422, "size"},
		{"size small", with("size", 10), 422, "size"},
		{"size not a size", with("size", "big"), 422, "size"},
		{"size as bytes", with("size", 1.5), 422, "size"},
		{"stages", with("stages", "2,x"), 422, "stages"},
		{"stage fan-in over the cap", with("stages", []int{2, 64}), 422, "stages"},
		{"empty stages", with("stages", []int{}), 422, "stages"},
		{"stageEpisodes", with("stageEpisodes", 0), 422, "stageEpisodes"},
		{"updates", with("updates", -1), 422, "updates"},
		{"evalEvery", with("evalEvery", -1), 422, "evalEvery"},
		{"unknown field", with("workers", 4), 422, "workers"},
		{"wrong type", with("episodes", "many"), 422, "episodes"},
		{"not JSON", "{", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do("POST", "/api/train", tc.body)
			var e apiErr
			_ = json.Unmarshal(data, &e)
			if code != tc.status || e.Field != tc.field {
				t.Fatalf("%d %s, want %d at %q", code, data, tc.status, tc.field)
			}
		})
	}
	for _, path := range []string{"/api/train/nope", "/api/train/nope/curve.csv"} {
		if code, _ := s.do("GET", path, nil); code != 404 {
			t.Errorf("GET %s: %d", path, code)
		}
	}
	if code, _ := s.do("POST", "/api/train/nope/cancel", nil); code != 404 {
		t.Errorf("cancel unknown: %d", code)
	}
}
