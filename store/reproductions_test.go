package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestReproductions(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	if _, err := db.LatestReproduction(ctx, "rcc-table2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("latest of none: %v, want ErrNotFound", err)
	}
	t0 := time.Unix(1700000000, 0)
	old := &Reproduction{Experiment: "rcc-table2", Quick: true, Created: t0,
		Runs: []ReproductionRun{{"n=16/dcqcn", "r1"}, {"n=16/rcc", "r2"}}}
	if err := db.CreateReproduction(ctx, old); err != nil {
		t.Fatal(err)
	}
	newer := &Reproduction{Experiment: "rcc-table2", Created: t0.Add(time.Second),
		Runs: []ReproductionRun{{"b", "r4"}, {"a", "r3"}}}
	other := &Reproduction{Experiment: "qcn-fig9", Created: t0.Add(2 * time.Second)}
	for _, r := range []*Reproduction{newer, other} {
		if err := db.CreateReproduction(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		get  func() (*Reproduction, error)
		want *Reproduction
	}{
		{func() (*Reproduction, error) { return db.LatestReproduction(ctx, "rcc-table2") }, newer},
		{func() (*Reproduction, error) { return db.GetReproduction(ctx, old.ID) }, old},
		{func() (*Reproduction, error) { return db.LatestReproduction(ctx, "qcn-fig9") }, other},
	} {
		got, err := tc.get()
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != tc.want.ID || got.Experiment != tc.want.Experiment || got.Quick != tc.want.Quick ||
			!got.Created.Equal(tc.want.Created) || !reflect.DeepEqual(got.Runs, tc.want.Runs) {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	}
	if _, err := db.GetReproduction(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get unknown: %v", err)
	}
}
