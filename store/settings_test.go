package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// A secret is made once and then read back the same, across reopening.
func TestSecretAndSettings(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/lab.db"
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Secret(ctx, "k", 32)
	if err != nil || len(a) != 32 {
		t.Fatalf("secret %x, %v", a, err)
	}
	b, _ := db.Secret(ctx, "k", 32)
	if !bytes.Equal(a, b) {
		t.Error("a second Secret made a new value")
	}
	if _, err := db.Setting(ctx, "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing setting: %v", err)
	}
	if err := db.SetSetting(ctx, "s", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSetting(ctx, "s", []byte("2")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, _ := db.Secret(ctx, "k", 32)
	if v, _ := db.Setting(ctx, "s"); !bytes.Equal(a, c) || string(v) != "2" {
		t.Errorf("after reopening: secret changed %v, setting %q", !bytes.Equal(a, c), v)
	}
}

// The first claim of a row owns it; a later claim changes nothing.
func TestClaimOwner(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir()+"/lab.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc := &Scenario{Name: "x", JSON: []byte(`{"x":1}`)}
	if _, err := db.PutScenario(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if o, err := db.Owner(ctx, OwnedScenario, sc.ID); err != nil || o != "" {
		t.Fatalf("new scenario's owner %q, %v", o, err)
	}
	for _, who := range []string{"t:a", "t:b"} {
		if err := db.Claim(ctx, OwnedScenario, sc.ID, who); err != nil {
			t.Fatal(err)
		}
	}
	if o, _ := db.Owner(ctx, OwnedScenario, sc.ID); o != "t:a" {
		t.Errorf("owner %q, want the first claimant t:a", o)
	}
	if _, err := db.Owner(ctx, OwnedScenario, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing row: %v", err)
	}
	if _, err := db.Owner(ctx, "runs; drop table runs", "x"); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
