package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainThenRunWithThePolicy: a tiny training run writes its files, and
// a scenario naming the policy file runs with it; a missing, corrupt or
// NaN-carrying policy file stops the run with an error at cc.policy.
func TestTrainThenRunWithThePolicy(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, context.Background(), "train", "fdcc", "--out", dir, "--episodes", "4", "--stages", "2",
		"--stage-episodes", "4", "--round", "2", "--size", "30KB", "--hidden", "8", "--updates", "2", "--random-episodes", "2", "--eval-every", "0", "--quiet")
	if code != exitOK {
		t.Fatalf("train: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"policy.safetensors", "final.safetensors", "curve.csv", "train.json", "checkpoint/learner.safetensors", "checkpoint/replay.gob", "checkpoint/trainer.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("train wrote no %s: %v", f, err)
		}
	}
	if rows := strings.Count(readFile(t, filepath.Join(dir, "curve.csv")), "\n"); rows != 3 {
		t.Fatalf("curve.csv has %d lines, want a header and 2 rounds", rows)
	}
	// --resume continues to more episodes.
	code, _, stderr = runCLI(t, context.Background(), "train", "fdcc", "--out", dir, "--resume", "--episodes", "6", "--quiet")
	if code != exitOK || !strings.Contains(readFile(t, filepath.Join(dir, "train.json")), `"played": 6`) {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}

	policy, err := os.ReadFile(filepath.Join(dir, "policy.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	nan := append([]byte(nil), policy...)
	// The first tensor's first value: 8 bytes after the header.
	hdr := int(nan[0]) | int(nan[1])<<8 | int(nan[2])<<16 | int(nan[3])<<24
	copy(nan[8+hdr:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	files := map[string][]byte{"good.safetensors": policy, "short.safetensors": policy[:100], "nan.safetensors": nan}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ policy, want string }{
		{"good.safetensors", ""},
		{"missing.safetensors", "cc.policy: not a policy file"},
		{"short.safetensors", "cc.policy: fdcc: loading a policy"},
		{"nan.safetensors", "is NaN"},
	} {
		sc := filepath.Join(dir, "s.json")
		doc := `{"name": "p", "seed": 1, "topology": {"kind": "dumbbell", "senders": 2, "receivers": 1,
		  "hostLink": {"rate": "100Gbps", "delay": "1us"}},
		  "cc": {"algorithm": "fdcc", "policy": "` + tc.policy + `"},
		  "workload": [{"kind": "incast", "senders": ["h0", "h1"], "receiver": "r0", "size": "100KB", "start": "0s"}]}`
		if err := os.WriteFile(sc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, context.Background(), "run", sc, "--out", filepath.Join(dir, "out"), "--quiet")
		if tc.want == "" {
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", tc.policy, code, stderr)
			}
			continue
		}
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Fatalf("%s: exit %d, stderr %q, want an error with %q", tc.policy, code, stderr, tc.want)
		}
	}
}

// TestTrainMethod: rlcc trains with ADPG unless --method says td3, and
// its defaults are ADPG's where no flag is given; fdcc cannot take ADPG.
func TestTrainMethod(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in train.json
	}{
		{[]string{"rlcc"}, []string{`"Method": "adpg"`, `"Hidden": 12`, `"Stages": [` + "\n      4,"}},
		{[]string{"rlcc", "--method", "td3"}, []string{`"Method": "td3"`, `"Hidden": 16`}},
		{[]string{"rlcc", "--hidden", "6", "--lr", "0.003"}, []string{`"Method": "adpg"`, `"Hidden": 6`, `"LR": 0.003`}},
		{[]string{"fdcc", "--set", "shareReward=0", "--spread", "50us"}, []string{`"shareReward": 0`, `"Spread": 50000000`}},
	} {
		dir := t.TempDir()
		args := append([]string{"train"}, tc.args...)
		args = append(args, "--out", dir, "--episodes", "2", "--round", "2", "--size", "100KB", "--eval-every", "0", "--quiet")
		code, _, stderr := runCLI(t, context.Background(), args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		js := readFile(t, filepath.Join(dir, "train.json"))
		for _, w := range tc.want {
			if !strings.Contains(js, w) {
				t.Errorf("%v: train.json lacks %q:\n%s", tc.args, w, js)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"fdcc", "--method", "adpg"}, "method"},
		{[]string{"rlcc", "--method", "ppo"}, "method"},
		{[]string{"fdcc", "--set", "nope=1"}, "params.nope"},
		{[]string{"fdcc", "--set", "shareReward"}, "NAME=VALUE"},
		{[]string{"fdcc", "--spread", "soon"}, "--spread"},
		{[]string{"fdcc", "--lr", "-1"}, "--lr"},
	} {
		code, _, stderr := runCLI(t, context.Background(), append(append([]string{"train"}, tc.args...), "--out", t.TempDir(), "--quiet")...)
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error naming %q", tc.args, code, stderr, tc.want)
		}
	}
}
