package fdcc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"cclab/cc/nn"
)

// rewrite reads a safetensors file, lets edit change its tensors, shapes
// and metadata, and writes it again.
func rewrite(t *testing.T, file []byte, edit func(tensors map[string][]float64, shapes map[string][]int, meta map[string]string)) []byte {
	t.Helper()
	f, err := nn.ReadSafetensors(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	ts, sh := map[string][]float64{}, map[string][]int{}
	for _, x := range f.Tensors {
		ts[x.Name], sh[x.Name] = x.Data, x.Shape
	}
	edit(ts, sh, f.Meta)
	var out []nn.Tensor
	for name, d := range ts {
		out = append(out, nn.Tensor{Name: name, Shape: sh[name], Data: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	var buf bytes.Buffer
	if err := nn.WriteSafetensors(&buf, out, f.Meta); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawTensor is a tensor for writeRaw, which writes any bits (NaN too) as
// F32 or F64.
type rawTensor struct {
	name, dtype string
	shape       []int
	data        []float64
}

// writeRaw writes a safetensors file byte by byte from the format's
// layout, as PyTorch's safetensors.torch.save_file would for F32 tensors.
func writeRaw(ts []rawTensor, meta map[string]string) []byte {
	var h strings.Builder
	h.WriteString("{")
	var data []byte
	if len(meta) > 0 {
		m, _ := json.Marshal(meta)
		fmt.Fprintf(&h, `"__metadata__":%s`, m)
	}
	for i, x := range ts {
		if i > 0 || len(meta) > 0 {
			h.WriteString(",")
		}
		begin := len(data)
		for _, v := range x.data {
			if x.dtype == "F32" {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
			} else {
				data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
			}
		}
		shape, _ := json.Marshal(x.shape)
		fmt.Fprintf(&h, `%q:{"dtype":%q,"shape":%s,"data_offsets":[%d,%d]}`, x.name, x.dtype, shape, begin, len(data))
	}
	h.WriteString("}")
	for h.Len()%8 != 0 {
		h.WriteString(" ")
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(h.Len()))
	return append(append(out, h.String()...), data...)
}

func TestPolicyRoundTrip(t *testing.T) {
	a := Arch{Obs: 8, Hist: 8, Hidden: 12, ActLimit: 2}
	p := newPolicy(t, a, 4)
	var buf bytes.Buffer
	if err := SavePolicy(&buf, p, map[string]string{"trained": "dumbbell, 2-to-1"}); err != nil {
		t.Fatal(err)
	}
	q, meta, err := LoadPolicy(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if q.Arch() != a {
		t.Fatalf("arch %+v, want %+v", q.Arch(), a)
	}
	if meta["trained"] != "dumbbell, 2-to-1" || meta[metaHidden] != "12" {
		t.Fatalf("metadata %v", meta)
	}
	for i, b := range batches(9, a, 1, 5) {
		want := p.Act(p.NewScratch(), b.Hist, b.HistLen[0], b.Obs)
		if got := q.Act(q.NewScratch(), b.Hist, b.HistLen[0], b.Obs); got != want {
			t.Fatalf("input %d: loaded policy %v, saved %v", i, got, want)
		}
	}
	if err := SavePolicy(&bytes.Buffer{}, p, map[string]string{metaHidden: "3"}); err == nil {
		t.Fatal("a reserved metadata key was accepted")
	}
}

func TestLoadPolicyErrors(t *testing.T) {
	a := Arch{Obs: 3, Hist: 2, Hidden: 4, ActLimit: 1}
	var buf bytes.Buffer
	if err := SavePolicy(&buf, newPolicy(t, a, 1), nil); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	edit := func(f func(ts map[string][]float64, sh map[string][]int, m map[string]string)) []byte {
		return rewrite(t, good, f)
	}
	const lstmW = "actor.mem_lstm_layers.0.weight_ih_l0"
	withNaN := func() []byte {
		f, _ := nn.ReadSafetensors(bytes.NewReader(good))
		var ts []rawTensor
		for _, x := range f.Tensors {
			d := append([]float64(nil), x.Data...)
			if x.Name == lstmW {
				d[5] = math.NaN()
			}
			ts = append(ts, rawTensor{x.Name, "F64", x.Shape, d})
		}
		return writeRaw(ts, f.Meta)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"wrong shape", edit(func(ts map[string][]float64, sh map[string][]int, _ map[string]string) {
			ts["actor.cur_feature_layers.0.weight"] = make([]float64, 4*4)
			sh["actor.cur_feature_layers.0.weight"] = []int{4, 4}
		}), "tensor actor.cur_feature_layers.0.weight has shape [4, 4], want [4, 3]"},
		{"hidden size disagrees with the tensors", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			m[metaHidden] = "5"
		}), "tensor actor.mem_pre_lstm_layers.0.weight has shape [4, 3], want [5, 3]"},
		{"missing tensor", edit(func(ts map[string][]float64, _ map[string][]int, _ map[string]string) {
			delete(ts, "actor.post_combined_layers.2.bias")
		}), "tensor actor.post_combined_layers.2.bias is missing"},
		{"unexpected tensor", edit(func(ts map[string][]float64, sh map[string][]int, _ map[string]string) {
			ts["actor.post_combined_layers.4.bias"] = []float64{0}
			sh["actor.post_combined_layers.4.bias"] = []int{1}
		}), "tensor actor.post_combined_layers.4.bias is unexpected"},
		{"NaN", withNaN(), "tensor " + lstmW + ": value 5 is NaN"},
		{"no arch", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			delete(m, metaActLimit)
		}), metaActLimit + " is missing"},
		{"bad hist", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			m[metaHist] = "0"
		}), "Hist 0"},
		{"not a policy", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			m[metaFormat] = "something else"
		}), "format"},
		{"truncated", good[:len(good)-3], "out of the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadPolicy(bytes.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// pytorchFile writes p's actor as LSTM-TD3's MLPActorCritic state_dict
// saved by safetensors.torch.save_file: F32 tensors named "pi.<module>…",
// beside two of the critics' tensors; spoil may change the list.
func pytorchFile(p *Policy, spoil func([]rawTensor) []rawTensor) []byte {
	var ts []rawTensor
	for _, x := range p.actor.params {
		ts = append(ts, rawTensor{"pi." + strings.TrimPrefix(x.Name, "actor."), "F32", x.Shape, x.Value})
	}
	ts = append(ts,
		rawTensor{"q1.post_combined_layers.2.bias", "F32", []int{1}, []float64{0.5}},
		rawTensor{"q2.post_combined_layers.2.bias", "F32", []int{1}, []float64{-0.5}})
	if spoil != nil {
		ts = spoil(ts)
	}
	return writeRaw(ts, map[string]string{"format": "pt"})
}

func TestImportPyTorch(t *testing.T) {
	a := Arch{Obs: 8, Hist: 8, Hidden: 6, ActLimit: 2}
	p := newPolicy(t, a, 12)
	// The reference's names, checked one by one against lstm_td3_main.py.
	var names []string
	for _, x := range p.actor.params {
		names = append(names, x.Name)
	}
	want := "actor.mem_pre_lstm_layers.0.weight actor.mem_pre_lstm_layers.0.bias " +
		"actor.mem_lstm_layers.0.weight_ih_l0 actor.mem_lstm_layers.0.weight_hh_l0 " +
		"actor.mem_lstm_layers.0.bias_ih_l0 actor.mem_lstm_layers.0.bias_hh_l0 " +
		"actor.mem_after_lstm_layers.0.weight actor.mem_after_lstm_layers.0.bias " +
		"actor.cur_feature_layers.0.weight actor.cur_feature_layers.0.bias " +
		"actor.post_combined_layers.0.weight actor.post_combined_layers.0.bias " +
		"actor.post_combined_layers.2.weight actor.post_combined_layers.2.bias"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("parameter names\n%s\nwant\n%s", got, want)
	}

	q, err := ImportPyTorch(bytes.NewReader(pytorchFile(p, nil)), a, "pi.")
	if err != nil {
		t.Fatal(err)
	}
	// The imported actor is p's with every value rounded to float32.
	r := &Policy{arch: a, actor: p.actor.clone()}
	for _, x := range r.actor.params {
		for i, v := range x.Value {
			x.Value[i] = float64(float32(v))
		}
	}
	for i, b := range batches(13, a, 1, 5) {
		got := q.Act(q.NewScratch(), b.Hist, b.HistLen[0], b.Obs)
		if w := r.Act(r.NewScratch(), b.Hist, b.HistLen[0], b.Obs); got != w {
			t.Fatalf("input %d: imported %v, want %v", i, got, w)
		}
	}

	for _, tc := range []struct {
		name  string
		arch  Arch
		spoil func([]rawTensor) []rawTensor
		want  string
	}{
		{"missing", a, func(ts []rawTensor) []rawTensor { return ts[1:] }, "tensor pi.mem_pre_lstm_layers.0.weight is missing"},
		{"another hidden size", Arch{Obs: 8, Hist: 8, Hidden: 7, ActLimit: 2}, nil, "tensor pi.mem_pre_lstm_layers.0.weight has shape [6, 8], want [7, 8]"},
		{"past actions in the history", a, func(ts []rawTensor) []rawTensor {
			ts[0] = rawTensor{"pi.mem_pre_lstm_layers.0.weight", "F32", []int{6, 9}, make([]float64, 54)}
			return ts
		}, "tensor pi.mem_pre_lstm_layers.0.weight has shape [6, 9], want [6, 8]"},
		{"two current-feature layers", a, func(ts []rawTensor) []rawTensor {
			return append(ts, rawTensor{"pi.cur_feature_layers.2.bias", "F32", []int{6}, make([]float64, 6)})
		}, "tensor pi.cur_feature_layers.2.bias is not part of"},
		{"NaN", a, func(ts []rawTensor) []rawTensor {
			ts[4].data = append([]float64(nil), ts[4].data...)
			ts[4].data[2] = math.NaN()
			return ts
		}, "tensor pi.mem_lstm_layers.0.bias_ih_l0: value 2 is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ImportPyTorch(bytes.NewReader(pytorchFile(p, tc.spoil)), tc.arch, "pi.")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
