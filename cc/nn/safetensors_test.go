package nn

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// handFile is a safetensors file written byte by byte from the format's
// layout: the header's size (256, as 8 little-endian bytes), 251 bytes of
// JSON padded with 5 spaces, then 24 bytes of data holding an F32 vector,
// an F64 scalar, an F16 1×2 matrix and a BF16 vector.
var handFile = []byte("\x00\x01\x00\x00\x00\x00\x00\x00" +
	`{"__metadata__":{"format":"pt"},` +
	`"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},` +
	`"b":{"dtype":"F64","shape":[],"data_offsets":[8,16]},` +
	`"c":{"dtype":"F16","shape":[1,2],"data_offsets":[16,20]},` +
	`"d":{"dtype":"BF16","shape":[2],"data_offsets":[20,24]}}` + "     " +
	"\x00\x00\xc0\x3f" + "\x00\x00\x00\xc0" + // a: F32 1.5 (0x3fc00000), −2 (0xc0000000)
	"\x00\x00\x00\x00\x00\x00\xd0\x3f" + // b: F64 0.25 (0x3fd0000000000000)
	"\x01\x00" + "\xff\x7b" + // c: F16 2^−24 (smallest subnormal, 0x0001), 65504 (largest, 0x7bff)
	"\x80\x3f" + "\x40\xc0") // d: BF16 1 (0x3f80), −3 (0xc040)

func TestReadHandWritten(t *testing.T) {
	if n := len(handFile); n != 8+256+24 {
		t.Fatalf("hand-written file is %d bytes, want 288", n)
	}
	f, err := ReadSafetensors(bytes.NewReader(handFile))
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta["format"] != "pt" || len(f.Meta) != 1 {
		t.Errorf("metadata %v", f.Meta)
	}
	for _, tc := range []struct {
		name  string
		dtype string
		shape []int
		want  []float64
	}{
		{"a", "F32", []int{2}, []float64{1.5, -2}},
		{"b", "F64", []int{}, []float64{0.25}},
		{"c", "F16", []int{1, 2}, []float64{math.Ldexp(1, -24), 65504}},
		{"d", "BF16", []int{2}, []float64{1, -3}},
	} {
		got, err := f.Lookup(tc.name, tc.shape...)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if f.DTypes[tc.name] != tc.dtype {
			t.Errorf("%s: dtype %s, want %s", tc.name, f.DTypes[tc.name], tc.dtype)
		}
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("%s[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
	if names := []string{f.Tensors[0].Name, f.Tensors[1].Name, f.Tensors[2].Name, f.Tensors[3].Name}; strings.Join(names, "") != "abcd" {
		t.Errorf("order %v, want the data order a b c d", names)
	}
}

func TestHalfFloats(t *testing.T) {
	for _, tc := range []struct {
		bits uint16
		want float64
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x0400, math.Ldexp(1, -14)},
		{0x03ff, math.Ldexp(1023, -24)}, {0x7c00, math.Inf(1)}, {0xfc00, math.Inf(-1)},
	} {
		if got := halfToFloat(tc.bits); got != tc.want {
			t.Errorf("half %#04x = %v, want %v", tc.bits, got, tc.want)
		}
	}
	if !math.IsNaN(halfToFloat(0x7e00)) {
		t.Error("half 0x7e00 is not NaN")
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	in := []Tensor{
		{Name: "w", Shape: []int{2, 3}, Data: []float64{1, -2, 3.5, math.Pi, -1e-300, 1e300}},
		{Name: "scalar", Shape: []int{}, Data: []float64{math.SmallestNonzeroFloat64}},
		{Name: "empty", Shape: []int{0, 4}, Data: []float64{}},
		{Name: `odd "name" é/ü`, Shape: []int{1}, Data: []float64{math.Copysign(0, -1)}},
	}
	meta := map[string]string{"arch": `{"obs":8}`, "note": "a \"quoted\" <value> ü", "": "empty key"}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, in, meta); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if n := binary.LittleEndian.Uint64(b); (8+n)%8 != 0 {
		t.Errorf("header of %d bytes leaves the data unaligned", n)
	}
	f, err := ReadSafetensors(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range meta {
		if f.Meta[k] != v {
			t.Errorf("meta[%q] = %q, want %q", k, f.Meta[k], v)
		}
	}
	if len(f.Tensors) != len(in) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(in))
	}
	for i, want := range in {
		got := f.Tensors[i]
		if got.Name != want.Name || shapeString(got.Shape) != shapeString(want.Shape) || len(got.Data) != len(want.Data) {
			t.Fatalf("tensor %d: %s %v (%d values), want %s %v (%d)", i, got.Name, got.Shape, len(got.Data), want.Name, want.Shape, len(want.Data))
		}
		for j := range want.Data {
			if math.Float64bits(got.Data[j]) != math.Float64bits(want.Data[j]) {
				t.Errorf("%s[%d] = %v, want %v", want.Name, j, got.Data[j], want.Data[j])
			}
		}
		if f.DTypes[want.Name] != "F64" {
			t.Errorf("%s written as %s", want.Name, f.DTypes[want.Name])
		}
	}
	// Writing is deterministic.
	var again bytes.Buffer
	if err := WriteSafetensors(&again, in, meta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), b) {
		t.Error("two writes of the same tensors differ")
	}
}

// file builds a safetensors file from a header and data.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func f64s(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func TestReadErrors(t *testing.T) {
	good := `{"t":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}}`
	for _, tc := range []struct {
		name string
		in   []byte
		want string // a substring of the error
	}{
		{"empty", nil, "truncated"},
		{"short size", []byte{1, 0, 0}, "truncated"},
		{"header over the limit", binary.LittleEndian.AppendUint64(nil, MaxHeaderSize+1), "over the limit"},
		{"huge header claim", binary.LittleEndian.AppendUint64(nil, math.MaxUint64), "over the limit"},
		{"truncated header", file(good, f64s(1, 2))[:20], "truncated"},
		{"header not an object", file(`["t"]`, nil), "start with '{'"},
		{"leading space", file(` {}`, nil), "start with '{'"},
		{"invalid JSON", file(`{"t":`, nil), "header"},
		{"junk after the object", file(`{} x`, nil), "after the JSON object"},
		{"repeated key", file(`{"t":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"t":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`, f64s(1)), `"t" appears twice`},
		{"no dtype", file(`{"t":{"shape":[2],"data_offsets":[0,16]}}`, f64s(1, 2)), "tensor t has no dtype"},
		{"no shape", file(`{"t":{"dtype":"F64","data_offsets":[0,16]}}`, f64s(1, 2)), "tensor t has no shape"},
		{"no offsets", file(`{"t":{"dtype":"F64","shape":[2]}}`, f64s(1, 2)), "tensor t needs data_offsets"},
		{"three offsets", file(`{"t":{"dtype":"F64","shape":[2],"data_offsets":[0,8,16]}}`, f64s(1, 2)), "tensor t needs data_offsets"},
		{"unknown dtype", file(`{"t":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}}`, f64s(1, 2)), `tensor t has dtype "I64"`},
		{"negative dimension", file(`{"t":{"dtype":"F64","shape":[-2],"data_offsets":[0,16]}}`, f64s(1, 2)), "tensor t"},
		{"fractional offset", file(`{"t":{"dtype":"F64","shape":[2],"data_offsets":[0,1.5]}}`, f64s(1, 2)), "tensor t"},
		{"wrong shape for offsets", file(`{"t":{"dtype":"F64","shape":[3],"data_offsets":[0,16]}}`, f64s(1, 2)), "tensor t: shape [3] of F64 needs 24 bytes"},
		{"huge shape", file(`{"t":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,16]}}`, f64s(1, 2)), "tensor t: shape"},
		{"offsets past the end", file(`{"t":{"dtype":"F64","shape":[8],"data_offsets":[0,64]}}`, f64s(1, 2)), "tensor t: data_offsets [0, 64] out of the 16-byte buffer"},
		{"begin after end", file(`{"t":{"dtype":"F64","shape":[1],"data_offsets":[16,8]}}`, f64s(1, 2)), "tensor t: data_offsets [16, 8]"},
		{"overlap", file(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},"b":{"dtype":"F64","shape":[2],"data_offsets":[8,24]}}`, f64s(1, 2, 3)), "tensor b overlaps tensor a"},
		{"hole", file(`{"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[1],"data_offsets":[16,24]}}`, f64s(1, 2, 3)), "before tensor b belong to no tensor"},
		{"trailing bytes", file(good, append(f64s(1, 2), 0)), "1 bytes after the last tensor"},
		{"NaN", file(good, f64s(1, math.NaN())), "tensor t: value 1 is NaN"},
		{"infinity F32", file(`{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, []byte{0, 0, 0x80, 0x7f}), "tensor t: value 0 is +Inf"},
		{"NaN F16", file(`{"t":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 0x7e}), "tensor t: value 0 is NaN"},
		{"NaN BF16", file(`{"t":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}`, []byte{0xc0, 0x7f}), "tensor t: value 0 is NaN"},
		{"metadata not strings", file(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
		{"entry not an object", file(`{"t":[1,2]}`, nil), "tensor t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSafetensors(bytes.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	f, err := ReadSafetensors(bytes.NewReader(handFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		shape []int
		want  string
	}{
		{"missing", []int{2}, "tensor missing is missing"},
		{"a", []int{3}, "tensor a has shape [2], want [3]"},
		{"a", []int{2, 1}, "tensor a has shape [2], want [2, 1]"},
		{"b", []int{1}, "tensor b has shape [], want [1]"},
	} {
		if _, err := f.Lookup(tc.name, tc.shape...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Lookup(%s, %v): error %v, want %q", tc.name, tc.shape, err, tc.want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []Tensor
		want string
	}{
		{"NaN", []Tensor{{Name: "w", Shape: []int{2}, Data: []float64{0, math.NaN()}}}, "tensor w: value 1 is NaN"},
		{"infinity", []Tensor{{Name: "w", Shape: []int{1}, Data: []float64{math.Inf(-1)}}}, "tensor w: value 0 is -Inf"},
		{"shape", []Tensor{{Name: "w", Shape: []int{3}, Data: []float64{0, 1}}}, "tensor w: shape [3] does not hold its 2 values"},
		{"negative shape", []Tensor{{Name: "w", Shape: []int{-1}, Data: nil}}, "tensor w: shape [-1]"},
		{"repeated", []Tensor{{Name: "w", Shape: []int{}, Data: []float64{1}}, {Name: "w", Shape: []int{}, Data: []float64{1}}}, `tensor "w" appears twice`},
		{"reserved", []Tensor{{Name: "__metadata__", Shape: []int{}, Data: []float64{1}}}, "reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteSafetensors(&bytes.Buffer{}, tc.in, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzRead: no input makes ReadSafetensors panic, and whatever it accepts
// writes back as F64 and reads again to the same values.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, []Tensor{
		{Name: "x.weight", Shape: []int{2, 2}, Data: []float64{1, 2, 3, 4}},
		{Name: "x.bias", Shape: []int{2}, Data: []float64{-1, 0.5}},
	}, map[string]string{"k": "v"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(handFile)
	f.Add(file(`{}`, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ReadSafetensors(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteSafetensors(&out, r.Tensors, r.Meta); err != nil {
			t.Fatalf("accepted file does not write back: %v", err)
		}
		r2, err := ReadSafetensors(&out)
		if err != nil {
			t.Fatalf("written file does not read back: %v", err)
		}
		if len(r2.Tensors) != len(r.Tensors) {
			t.Fatalf("%d tensors, then %d", len(r.Tensors), len(r2.Tensors))
		}
		for i, tt := range r.Tensors {
			for j, v := range tt.Data {
				if r2.Tensors[i].Data[j] != v {
					t.Fatalf("%s[%d]: %v, then %v", tt.Name, j, v, r2.Tensors[i].Data[j])
				}
			}
		}
	})
}
