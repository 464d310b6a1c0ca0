package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestReplacePolicy(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	first := &Policy{Name: "p", Algorithm: "fdcc", Source: "job1", Data: []byte("part"), Meta: map[string]string{"interrupted": "true"}}
	if err := db.PutPolicy(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := db.PutPolicy(ctx, &Policy{Name: "taken", Algorithm: "fdcc", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	// a name taken by another policy: nothing changes
	if err := db.ReplacePolicy(ctx, first.ID, &Policy{Name: "taken", Algorithm: "fdcc", Data: []byte("y")}); !errors.Is(err, ErrExists) {
		t.Fatalf("replace onto a taken name: %v", err)
	}
	if _, err := db.GetPolicy(ctx, first.ID); err != nil {
		t.Fatalf("a failed replace deleted the old policy: %v", err)
	}
	final := &Policy{Name: "p", Algorithm: "fdcc", Source: "job1", Data: []byte("whole")}
	if err := db.ReplacePolicy(ctx, first.ID, final); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetPolicy(ctx, first.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the replaced policy is still there: %v", err)
	}
	if p, err := db.PolicyByName(ctx, "p"); err != nil || p.ID != final.ID || string(p.Data) != "whole" {
		t.Fatalf("policy p = %+v, %v", p, err)
	}
	// the old one gone already (deleted by a user): a plain store
	again := &Policy{Name: "q", Algorithm: "rlcc", Data: []byte("z")}
	if err := db.ReplacePolicy(ctx, "0000000000000000", again); err != nil {
		t.Fatal(err)
	}
}

func TestTrainJobs(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	j := &TrainJob{Name: "tiny", Algorithm: "fdcc", Config: json.RawMessage(`{"Episodes":4}`), Created: t0}
	if err := db.CreateTrainJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if len(j.ID) != 16 || j.Status != StatusQueued {
		t.Fatalf("created %+v", j)
	}
	if err := db.CreateTrainJob(ctx, &TrainJob{Name: "x", Algorithm: "fdcc", Config: json.RawMessage(`{}`), Status: "sleeping"}); err == nil {
		t.Fatal("a job with an unknown status was stored")
	}
	if err := db.StartTrainJob(ctx, j.ID, t0.Add(time.Second), 0, 2, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := db.AddTrainPoint(ctx, j.ID, i, []byte(`{"episode":`+string(rune('1'+i))+`}`), i+1, 2); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.GetTrainJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRunning || got.Episode != 3 || got.Stage != 2 || !got.Started.Equal(t0.Add(time.Second)) ||
		!got.Finished.IsZero() || string(got.Config) != `{"Episodes":4}` || !got.Created.Equal(t0) {
		t.Fatalf("running %+v", got)
	}

	// a process dies: the next marks the job interrupted
	ids, err := db.MarkTrainInterrupted(ctx)
	if err != nil || !reflect.DeepEqual(ids, []string{j.ID}) {
		t.Fatalf("MarkTrainInterrupted = %v, %v", ids, err)
	}
	got, _ = db.GetTrainJob(ctx, j.ID)
	if got.Status != StatusInterrupted || got.Error == "" || got.Finished.IsZero() {
		t.Fatalf("interrupted %+v", got)
	}
	// resumed from a checkpoint of episode 2: the third round goes
	if err := db.ResumeTrainJob(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.GetTrainJob(ctx, j.ID); got.Status != StatusQueued || got.Error != "" || !got.Finished.IsZero() {
		t.Fatalf("resumed %+v", got)
	}
	if err := db.StartTrainJob(ctx, j.ID, t0.Add(time.Hour), 2, 2, 2); err != nil {
		t.Fatal(err)
	}
	pts, err := db.TrainPoints(ctx, j.ID)
	if err != nil || len(pts) != 2 || string(pts[1]) != `{"episode":2}` {
		t.Fatalf("points %s, %v", pts, err)
	}
	if got, _ = db.GetTrainJob(ctx, j.ID); got.Episode != 2 || !got.Started.Equal(t0.Add(time.Second)) {
		t.Fatalf("restarted %+v (keeps its first start)", got)
	}
	// ended with a policy, then with none: the policy stays
	if err := db.FinishTrainJob(ctx, j.ID, TrainEnd{Status: StatusCancelled, Error: "cancelled", Policy: "p1", Interrupted: true}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishTrainJob(ctx, j.ID, TrainEnd{Status: StatusFailed, Error: "broke"}); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.GetTrainJob(ctx, j.ID); got.Status != StatusFailed || got.Policy != "p1" || !got.Interrupted || got.Error != "broke" {
		t.Fatalf("ended %+v", got)
	}
	if err := db.FinishTrainJob(ctx, j.ID, TrainEnd{Status: StatusRunning}); err == nil {
		t.Fatal("ended with a status that is not terminal")
	}
	for _, err := range []error{
		func() error { _, err := db.GetTrainJob(ctx, "0000000000000000"); return err }(),
		db.ResumeTrainJob(ctx, "0000000000000000"),
		db.AddTrainPoint(ctx, "0000000000000000", 0, []byte("{}"), 1, 2),
		db.StartTrainJob(ctx, "0000000000000000", t0, 0, 0, 0),
		db.FinishTrainJob(ctx, "0000000000000000", TrainEnd{Status: StatusDone}),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("an unknown job: %v, want ErrNotFound", err)
		}
	}

	// newest first; pruning keeps the newest ended ones and every live one
	var all []string
	for i := 1; i <= 3; i++ {
		k := &TrainJob{Name: "k", Algorithm: "rlcc", Config: json.RawMessage(`{}`), Created: t0.Add(time.Duration(i) * time.Minute)}
		if err := db.CreateTrainJob(ctx, k); err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			if err := db.FinishTrainJob(ctx, k.ID, TrainEnd{Status: StatusDone}); err != nil {
				t.Fatal(err)
			}
		}
		all = append([]string{k.ID}, all...)
	}
	all = append(all, j.ID)
	list, err := db.ListTrainJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids2 []string
	for _, x := range list {
		ids2 = append(ids2, x.ID)
	}
	if !reflect.DeepEqual(ids2, all) {
		t.Fatalf("list %v, want %v", ids2, all)
	}
	pruned, err := db.PruneTrainJobs(ctx, 1)
	if err != nil || !reflect.DeepEqual(pruned, []string{all[2], all[3]}) {
		t.Fatalf("pruned %v, %v; want %v", pruned, err, all[2:])
	}
	if n := count(t, db, `SELECT count(*) FROM train_points`); n != 0 {
		t.Errorf("%d points left of the pruned jobs", n)
	}
	if list, _ = db.ListTrainJobs(ctx); len(list) != 2 || list[0].ID != all[0] || list[1].ID != all[1] {
		t.Fatalf("after pruning %+v", list)
	}
}
