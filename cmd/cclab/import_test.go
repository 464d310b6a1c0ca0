package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/cc/fdcc"
	"cclab/cc/nn"
)

// TestImportPyTorch: the shipped FDCC actor, written as the reference
// PyTorch code names it (pi.*, no lab metadata), converts back into a
// policy that decides exactly as the shipped one; the unconverted file is
// refused by cc.policy with a pointer to the command.
func TestImportPyTorch(t *testing.T) {
	data, err := fdcc.ShippedFile("fdcc")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nn.ReadSafetensors(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var ts []nn.Tensor
	for _, x := range f.Tensors {
		ts = append(ts, nn.Tensor{Name: "pi." + strings.TrimPrefix(x.Name, "actor."), Shape: x.Shape, Data: x.Data})
	}
	var b bytes.Buffer
	if err := nn.WriteSafetensors(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "actor.safetensors"), filepath.Join(dir, "policy.safetensors")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, context.Background(), "import", "pytorch", in, "--out", out)
	if code != exitOK || !strings.Contains(stdout, "hidden 16") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	got, meta, err := fdcc.LoadPolicy(bytes.NewReader([]byte(readFile(t, out))))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := fdcc.Shipped("fdcc")
	if got.Arch() != want.Arch() || meta["algo"] != "fdcc" {
		t.Fatalf("imported %+v (meta %v), want %+v", got.Arch(), meta, want.Arch())
	}
	obs := []float64{1.3, 0.4, 0.9, 0.2, 0.1, -0.2, 0.25, 0.5}
	hist := append(append([]float64{}, obs...), obs...)
	if g, w := got.Act(got.NewScratch(), hist, 2, obs), want.Act(want.NewScratch(), hist, 2, obs); g != w {
		t.Fatalf("imported policy acts %v, the shipped one %v", g, w)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "pytorch", in, "--out", out, "--algo", "rlcc"}, "want [hidden, 2]"},
		{[]string{"import", "pytorch", in, "--out", out, "--prefix", "actor."}, `is the prefix "actor." right?`},
		{[]string{"import", "pytorch", in, "--out", out, "--algo", "dcqcn"}, "--algo"},
		{[]string{"import", "onnx", in}, "pytorch"},
		{[]string{"run", "../../scenarios/library/fdcc-dumbbell-4to1.json", "--set", "cc.policy=" + in, "--out", filepath.Join(dir, "run")}, "cclab import pytorch"},
	} {
		code, _, stderr := runCLI(t, context.Background(), tc.args...)
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error containing %q", tc.args, code, stderr, tc.want)
		}
	}
}
