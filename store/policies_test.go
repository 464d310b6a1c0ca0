package store

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestPolicies(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	a := &Policy{Name: "mine", Algorithm: "fdcc", Created: t0, Meta: map[string]string{"episodes": "2"}, Source: "upload", Data: []byte("file-a")}
	b := &Policy{Name: "other.v2_x-y", Algorithm: "rlcc", Created: t0.Add(time.Second), Source: "job1", Data: bytes.Repeat([]byte{0, 1, 2}, 1000)}
	for _, p := range []*Policy{a, b} {
		if err := db.PutPolicy(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutPolicy(ctx, &Policy{Name: "mine", Algorithm: "rlcc", Data: []byte("x")}); !errors.Is(err, ErrExists) {
		t.Fatalf("a second policy named mine: %v, want ErrExists", err)
	}
	list, err := db.ListPolicies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("list %+v, want b then a", list)
	}
	if list[0].Data != nil || list[0].Size != 3000 || list[1].Size != 6 {
		t.Errorf("a list has sizes and no data: %+v", list)
	}
	if list[0].Meta == nil || len(list[0].Meta) != 0 {
		t.Errorf("no metadata stored as %v, want an empty map", list[0].Meta)
	}
	for _, tc := range []struct {
		name string
		get  func() (*Policy, error)
		want *Policy
	}{
		{"by id", func() (*Policy, error) { return db.GetPolicy(ctx, a.ID) }, a},
		{"by name", func() (*Policy, error) { return db.PolicyByName(ctx, "other.v2_x-y") }, b},
	} {
		got, err := tc.get()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := *tc.want
		if want.Meta == nil {
			want.Meta = map[string]string{}
		}
		if !got.Created.Equal(want.Created) {
			t.Errorf("%s: created %v, want %v", tc.name, got.Created, want.Created)
		}
		got.Created = want.Created
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, want)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"get unknown", func() error { _, err := db.GetPolicy(ctx, "nope"); return err }()},
		{"name unknown", func() error { _, err := db.PolicyByName(ctx, "nope"); return err }()},
		{"delete unknown", db.DeletePolicy(ctx, "nope")},
	} {
		if !errors.Is(tc.err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, tc.err)
		}
	}
	if err := db.DeletePolicy(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetPolicy(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted policy: %v", err)
	}
	// the name is free again
	if err := db.PutPolicy(ctx, &Policy{Name: "mine", Algorithm: "fdcc", Source: "upload", Data: []byte("new")}); err != nil {
		t.Errorf("reusing a deleted policy's name: %v", err)
	}
}
