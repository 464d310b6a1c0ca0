package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

func TestScenarioID(t *testing.T) {
	for _, js := range []string{"", "{}", `{"name":"incast"}`} {
		sum := sha256.Sum256([]byte(js))
		want := hex.EncodeToString(sum[:])[:24]
		if got := ScenarioID([]byte(js)); got != want {
			t.Errorf("ScenarioID(%q) = %s, want %s", js, got, want)
		}
	}
}

func TestPutScenario(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	tests := []struct {
		name        string
		sc          Scenario
		wantCreated bool
		wantBuiltin bool
	}{
		{"new user scenario", Scenario{Name: "a", JSON: []byte(`{"a":1}`)}, true, false},
		{"same JSON again", Scenario{Name: "other name", JSON: []byte(`{"a":1}`)}, false, false},
		{"same JSON as built-in marks it", Scenario{Name: "a2", JSON: []byte(`{"a":1}`), Builtin: true}, false, true},
		{"not unmarked by a user put", Scenario{Name: "a3", JSON: []byte(`{"a":1}`)}, false, true},
		{"new built-in", Scenario{Name: "b", JSON: []byte(`{"b":1}`), Builtin: true}, true, true},
		{"explicit id", Scenario{ID: "custom-id", Name: "c", JSON: []byte(`{"c":1}`)}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := tt.sc
			created, err := db.PutScenario(ctx, &sc)
			if err != nil {
				t.Fatal(err)
			}
			if created != tt.wantCreated {
				t.Errorf("created %v, want %v", created, tt.wantCreated)
			}
			wantID := tt.sc.ID
			if wantID == "" {
				wantID = ScenarioID(tt.sc.JSON)
			}
			if sc.ID != wantID {
				t.Errorf("ID %s, want %s", sc.ID, wantID)
			}
			got, err := db.GetScenario(ctx, sc.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Builtin != tt.wantBuiltin {
				t.Errorf("builtin %v, want %v", got.Builtin, tt.wantBuiltin)
			}
			if string(got.JSON) != string(tt.sc.JSON) {
				t.Errorf("JSON %s, want %s", got.JSON, tt.sc.JSON)
			}
		})
	}
	// The first put's fields stay.
	got, err := db.GetScenario(ctx, ScenarioID([]byte(`{"a":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "a" {
		t.Errorf("name %q, want the first put's", got.Name)
	}
	if _, err := db.PutScenario(ctx, &Scenario{Name: "empty"}); err == nil {
		t.Error("stored a scenario without JSON")
	}
	if _, err := db.PutScenario(ctx, nil); err == nil {
		t.Error("stored a nil scenario")
	}
}

func TestGetScenarioRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	in := &Scenario{Name: "n", Description: "d", JSON: []byte("{\"x\": \"é\\u0000\"}\n"), CreatedAt: t0}
	if _, err := db.PutScenario(ctx, in); err != nil {
		t.Fatal(err)
	}
	createRun(t, db, in, 1, nil)
	createRun(t, db, in, 2, nil)
	got, err := db.GetScenario(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != in.ID || got.Name != "n" || got.Description != "d" || string(got.JSON) != string(in.JSON) ||
		got.Builtin || !got.CreatedAt.Equal(t0) || got.Runs != 2 {
		t.Errorf("got %+v, want %+v with 2 runs", got, in)
	}
	if _, err := db.GetScenario(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing scenario: %v, want ErrNotFound", err)
	}
}

func TestListScenariosOrder(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	put := func(name string, builtin bool, created time.Time) *Scenario {
		sc := &Scenario{Name: name, JSON: []byte(`{"n":"` + name + `"}`), Builtin: builtin, CreatedAt: created}
		if _, err := db.PutScenario(ctx, sc); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	put("user-old", false, t0)
	put("zeta", true, t0.Add(time.Hour))
	put("user-new", false, t0.Add(2*time.Hour))
	alpha := put("alpha", true, t0.Add(3*time.Hour))
	put("user-mid", false, t0.Add(time.Minute))
	createRun(t, db, alpha, 1, nil)

	list, err := db.ListScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range list {
		names = append(names, sc.Name)
		if sc.JSON != nil {
			t.Errorf("%s: JSON filled in a list", sc.Name)
		}
		if want := map[bool]int{true: 1}[sc.Name == "alpha"]; sc.Runs != want {
			t.Errorf("%s: %d runs, want %d", sc.Name, sc.Runs, want)
		}
	}
	want := []string{"alpha", "zeta", "user-new", "user-mid", "user-old"}
	if len(names) != len(want) {
		t.Fatalf("got %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("got %v, want %v", names, want)
		}
	}
}

func TestDeleteScenario(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	free := putScenario(t, db, "free", `{"free":1}`)
	used := putScenario(t, db, "used", `{"used":1}`)
	builtin := &Scenario{Name: "lib", JSON: []byte(`{"lib":1}`), Builtin: true}
	if _, err := db.PutScenario(ctx, builtin); err != nil {
		t.Fatal(err)
	}
	run := createRun(t, db, used, 1, nil)

	tests := []struct {
		name string
		id   string
		want error
	}{
		{"unused", free.ID, nil},
		{"again", free.ID, ErrNotFound},
		{"missing", "0123456789abcdef01234567", ErrNotFound},
		{"built-in", builtin.ID, ErrBuiltin},
		{"referenced by a run", used.ID, ErrInUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.DeleteScenario(ctx, tt.id)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("DeleteScenario: %v, want %v", err, tt.want)
			}
		})
	}
	// Once its run is gone, it can go.
	if err := db.DeleteRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteScenario(ctx, used.ID); err != nil {
		t.Fatal(err)
	}
	// The foreign key holds even without the check in DeleteScenario.
	used = putScenario(t, db, "used", `{"used":1}`)
	createRun(t, db, used, 2, nil)
	if _, err := db.sql.Exec(`DELETE FROM scenarios WHERE id = ?`, used.ID); err == nil {
		t.Error("the foreign key let a referenced scenario go")
	}
}
