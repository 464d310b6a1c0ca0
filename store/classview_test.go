package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

func TestScenarioFamilyAndClassRuns(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	base := putScenario(t, db, "base", `{"name":"base"}`)
	copy1 := putScenario(t, db, "copy1", `{"name":"copy1"}`)
	copy2 := putScenario(t, db, "copy2", `{"name":"copy2"}`)
	other := putScenario(t, db, "other", `{"name":"other"}`)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.SetScenarioParent(ctx, copy1.ID, base.ID))
	must(db.SetScenarioParent(ctx, copy2.ID, copy1.ID))
	must(db.SetScenarioParent(ctx, copy2.ID, other.ID)) // the first parent stays
	must(db.SetScenarioParent(ctx, other.ID, "nope"))   // not stored: ignored
	must(db.SetScenarioParent(ctx, base.ID, base.ID))   // itself: ignored
	if p, err := db.ScenarioParent(ctx, copy2.ID); err != nil || p != copy1.ID {
		t.Errorf("parent of copy2: %q %v", p, err)
	}
	if p, err := db.ScenarioParent(ctx, other.ID); err != nil || p != "" {
		t.Errorf("parent of other: %q %v", p, err)
	}
	fam, err := db.ScenarioFamily(ctx, base.ID)
	must(err)
	slices.Sort(fam)
	want := []string{base.ID, copy1.ID, copy2.ID}
	slices.Sort(want)
	if !slices.Equal(fam, want) {
		t.Errorf("family %v, want %v", fam, want)
	}

	r1 := createRun(t, db, base, 1, nil)
	r2 := createRun(t, db, copy2, 2, func(r *Run) { r.Client = "bob" })
	createRun(t, db, other, 3, nil)
	must(db.SetRunLabel(ctx, r2.ID, "Bob"))
	if err := db.SetRunLabel(ctx, "nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("label of a missing run: %v", err)
	}
	runs, err := db.ClassRuns(ctx, fam, "", 10)
	must(err)
	if len(runs) != 2 || runs[0].ID != r2.ID || runs[0].Label != "Bob" || runs[1].ID != r1.ID || runs[1].Label != "" {
		t.Errorf("class runs %+v", runs)
	}
	runs, err = db.ClassRuns(ctx, fam, "alice", 10)
	must(err)
	if len(runs) != 1 || runs[0].ID != r1.ID {
		t.Errorf("alice's runs %+v", runs)
	}
}

func TestExercises(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	base := putScenario(t, db, "base", `{"name":"base"}`)
	child := putScenario(t, db, "child", `{"name":"child"}`)
	if err := db.SetScenarioParent(ctx, child.ID, base.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExerciseOf(ctx, child.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("no exercise yet: %v", err)
	}
	if err := db.PutExercise(ctx, &Exercise{ScenarioID: base.ID, Locked: []string{"topology"}, Task: "tune g", Owner: "teacher"}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutExercise(ctx, &Exercise{ScenarioID: base.ID, Locked: []string{"topology", "seed"}, Task: "tune wr", Owner: "teacher"}); err != nil {
		t.Fatal(err)
	}
	ex, err := db.ExerciseOf(ctx, child.ID)
	if err != nil || ex.ScenarioID != base.ID || ex.Task != "tune wr" || !slices.Equal(ex.Locked, []string{"topology", "seed"}) {
		t.Errorf("exercise of child: %+v %v", ex, err)
	}
	// a long chain of copies still inherits it
	at := child.ID
	for i := range 200 {
		next := putScenario(t, db, fmt.Sprint("copy ", i), fmt.Sprintf(`{"name":"copy %d"}`, i))
		if err := db.SetScenarioParent(ctx, next.ID, at); err != nil {
			t.Fatal(err)
		}
		at = next.ID
	}
	if ex, err := db.ExerciseOf(ctx, at); err != nil || ex.ScenarioID != base.ID {
		t.Errorf("exercise 200 copies down: %+v %v", ex, err)
	}
	if ok, err := db.IsAncestor(ctx, base.ID, at); err != nil || !ok {
		t.Errorf("base is an ancestor of the last copy: %v %v", ok, err)
	}
	if ok, err := db.IsAncestor(ctx, at, base.ID); err != nil || ok {
		t.Errorf("the last copy is an ancestor of base: %v %v", ok, err)
	}
	if err := db.DeleteExercise(ctx, base.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetExercise(ctx, base.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted: %v", err)
	}
}
