package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"
)

// Safetensors files, implemented from the format's specification
// (github.com/huggingface/safetensors, "Format"):
//
//	8 bytes   N, the header's size, an unsigned little-endian 64-bit integer
//	N bytes   the header: a UTF-8 JSON object starting with '{', possibly
//	          padded at its end with spaces (0x20). It maps each tensor's
//	          name to {"dtype": "F64", "shape": [2, 3], "data_offsets":
//	          [begin, end]}, offsets in bytes relative to the start of the
//	          byte buffer, end exclusive. The optional key "__metadata__"
//	          maps strings to strings.
//	the rest  the byte buffer: each tensor's values, little-endian,
//	          row-major. The tensors must index the whole buffer, without
//	          holes or overlaps.
//
// Shape [] is a scalar; a zero dimension is an empty tensor. Keys may not
// repeat.

// MaxHeaderSize is the largest header ReadSafetensors accepts, in bytes
// (the reference implementation's limit).
const MaxHeaderSize = 100_000_000

// metadataKey is the header's reserved key.
const metadataKey = "__metadata__"

// Tensor is a named array of float64 values with a row-major shape.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float64
}

// numel returns the number of values of shape, and false when it overflows
// limit.
func numel(shape []int, limit uint64) (uint64, bool) {
	n := uint64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > limit {
			return 0, false
		}
		n = lo
	}
	return n, true
}

func shapeString(shape []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, d)
	}
	b.WriteByte(']')
	return b.String()
}

// WriteSafetensors writes tensors as F64, in the given order, with meta as
// the header's __metadata__ (nil for none). The header is padded with
// spaces to a multiple of 8 bytes, so the data are 8-byte aligned. A
// repeated name, the name "__metadata__", a shape that does not
// match the data, or a NaN or infinite value is an error naming the
// tensor.
func WriteSafetensors(w io.Writer, tensors []Tensor, meta map[string]string) error {
	var h bytes.Buffer
	h.WriteByte('{')
	if len(meta) > 0 {
		keys := make([]string, 0, len(meta))
		for k := range meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		h.WriteString(`"` + metadataKey + `":{`)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeJSONString(&h, k)
			h.WriteByte(':')
			writeJSONString(&h, meta[k])
		}
		h.WriteByte('}')
	}
	seen := make(map[string]bool, len(tensors))
	var off uint64
	for i, t := range tensors {
		switch {
		case t.Name == metadataKey:
			return fmt.Errorf("safetensors: tensor name %q is reserved", t.Name)
		case seen[t.Name]:
			return fmt.Errorf("safetensors: tensor %q appears twice", t.Name)
		}
		seen[t.Name] = true
		n, ok := numel(t.Shape, math.MaxInt64/8)
		if !ok || n != uint64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %s: shape %s does not hold its %d values", t.Name, shapeString(t.Shape), len(t.Data))
		}
		for j, v := range t.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("safetensors: tensor %s: value %d is %v", t.Name, j, v)
			}
		}
		if i > 0 || len(meta) > 0 {
			h.WriteByte(',')
		}
		writeJSONString(&h, t.Name)
		fmt.Fprintf(&h, `:{"dtype":"F64","shape":%s,"data_offsets":[%d,%d]}`,
			strings.ReplaceAll(shapeString(t.Shape), " ", ""), off, off+8*n)
		off += 8 * n
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	var size [8]byte
	binary.LittleEndian.PutUint64(size[:], uint64(h.Len()))
	if _, err := w.Write(size[:]); err != nil {
		return fmt.Errorf("safetensors: writing the header size: %w", err)
	}
	if _, err := w.Write(h.Bytes()); err != nil {
		return fmt.Errorf("safetensors: writing the header: %w", err)
	}
	var buf []byte
	for _, t := range tensors {
		buf = buf[:0]
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("safetensors: writing tensor %s: %w", t.Name, err)
		}
	}
	return nil
}

func writeJSONString(b *bytes.Buffer, s string) {
	// json.Marshal of a string cannot fail; it escapes HTML characters,
	// which is still valid JSON.
	q, _ := json.Marshal(s)
	b.Write(q)
}

// File is the content of a safetensors file: its tensors, converted to
// float64, and its metadata.
type File struct {
	// Meta is the header's __metadata__ (empty when absent).
	Meta map[string]string
	// Tensors are in the order of their data in the file.
	Tensors []Tensor
	// DTypes holds each tensor's dtype in the file, by name.
	DTypes map[string]string
	byName map[string]int
}

// Get returns the tensor named name.
func (f *File) Get(name string) (Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Tensor{}, false
	}
	return f.Tensors[i], true
}

// Lookup returns the values of the tensor named name, which must have
// exactly the given shape (none for a scalar). A missing tensor or a wrong
// shape is an error naming the tensor.
func (f *File) Lookup(name string, shape ...int) ([]float64, error) {
	t, ok := f.Get(name)
	if !ok {
		return nil, fmt.Errorf("safetensors: tensor %s is missing", name)
	}
	if len(t.Shape) != len(shape) {
		return nil, fmt.Errorf("safetensors: tensor %s has shape %s, want %s", name, shapeString(t.Shape), shapeString(shape))
	}
	for i := range shape {
		if t.Shape[i] != shape[i] {
			return nil, fmt.Errorf("safetensors: tensor %s has shape %s, want %s", name, shapeString(t.Shape), shapeString(shape))
		}
	}
	return t.Data, nil
}

// dtypeSize is the byte size of the dtypes ReadSafetensors converts.
var dtypeSize = map[string]uint64{"F64": 8, "F32": 4, "F16": 2, "BF16": 2}

// headerEntry is one tensor's description in the header.
type headerEntry struct {
	DType       *string   `json:"dtype"`
	Shape       *[]uint64 `json:"shape"`
	DataOffsets *[]uint64 `json:"data_offsets"`
}

// ReadSafetensors reads a safetensors file of F64, F32, F16 or BF16
// tensors and converts them to float64. It checks everything it reads: a
// short file, a header over MaxHeaderSize, invalid JSON, a repeated key, a
// missing field, an unknown dtype, a shape that does not match the
// offsets, offsets out of the buffer, overlapping or leaving holes, and a
// NaN or infinite value are errors, naming the tensor where there is one.
func ReadSafetensors(r io.Reader) (*File, error) {
	var size [8]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, fmt.Errorf("safetensors: reading the header size: %w", truncated(err))
	}
	n := binary.LittleEndian.Uint64(size[:])
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("safetensors: header of %d bytes is over the limit of %d", n, MaxHeaderSize)
	}
	// ReadAll through a limit, not a buffer of n bytes: a short file with a
	// large size claim costs only what it holds.
	header, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("safetensors: reading the header: %w", err)
	}
	if uint64(len(header)) != n {
		return nil, fmt.Errorf("safetensors: file truncated: header of %d bytes, %d present", n, len(header))
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("safetensors: reading the data: %w", err)
	}
	return parse(header, data)
}

func truncated(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("file truncated")
	}
	return err
}

// span is a tensor's byte range in the buffer.
type span struct {
	name       string
	begin, end uint64
}

func parse(header, data []byte) (*File, error) {
	if len(header) == 0 || header[0] != '{' {
		return nil, errors.New("safetensors: header does not start with '{'")
	}
	keys, values, err := splitObject(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	f := &File{Meta: map[string]string{}, DTypes: map[string]string{}, byName: map[string]int{}}
	var spans []span
	entries := map[string]headerEntry{}
	for i, k := range keys {
		if k == metadataKey {
			if err := json.Unmarshal(values[i], &f.Meta); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__ is not a map of strings: %w", err)
			}
			if f.Meta == nil { // "null"
				f.Meta = map[string]string{}
			}
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(values[i], &e); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", k, err)
		}
		switch {
		case e.DType == nil:
			return nil, fmt.Errorf("safetensors: tensor %s has no dtype", k)
		case e.Shape == nil:
			return nil, fmt.Errorf("safetensors: tensor %s has no shape", k)
		case e.DataOffsets == nil || len(*e.DataOffsets) != 2:
			return nil, fmt.Errorf("safetensors: tensor %s needs data_offsets [begin, end]", k)
		}
		es, ok := dtypeSize[*e.DType]
		if !ok {
			return nil, fmt.Errorf("safetensors: tensor %s has dtype %q; want F64, F32, F16 or BF16", k, *e.DType)
		}
		begin, end := (*e.DataOffsets)[0], (*e.DataOffsets)[1]
		if begin > end || end > uint64(len(data)) {
			return nil, fmt.Errorf("safetensors: tensor %s: data_offsets [%d, %d] out of the %d-byte buffer", k, begin, end, len(data))
		}
		count := uint64(1)
		for _, d := range *e.Shape {
			hi, lo := bits.Mul64(count, d)
			if hi != 0 || lo > uint64(len(data)) {
				return nil, fmt.Errorf("safetensors: tensor %s: shape %v is larger than the file", k, *e.Shape)
			}
			count = lo
		}
		if count*es != end-begin {
			return nil, fmt.Errorf("safetensors: tensor %s: shape %v of %s needs %d bytes, data_offsets [%d, %d] give %d",
				k, *e.Shape, *e.DType, count*es, begin, end, end-begin)
		}
		entries[k] = e
		spans = append(spans, span{k, begin, end})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	var at uint64
	for i, s := range spans {
		if s.begin < at {
			return nil, fmt.Errorf("safetensors: tensor %s overlaps tensor %s", s.name, spans[i-1].name)
		}
		if s.begin > at {
			return nil, fmt.Errorf("safetensors: bytes [%d, %d) before tensor %s belong to no tensor", at, s.begin, s.name)
		}
		at = s.end
	}
	if at != uint64(len(data)) {
		return nil, fmt.Errorf("safetensors: %d bytes after the last tensor belong to no tensor", uint64(len(data))-at)
	}
	for _, s := range spans {
		e := entries[s.name]
		shape := make([]int, len(*e.Shape))
		for i, d := range *e.Shape {
			shape[i] = int(d) // bounded by the file size above
		}
		vals, err := decode(*e.DType, data[s.begin:s.end])
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", s.name, err)
		}
		f.byName[s.name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, Tensor{Name: s.name, Shape: shape, Data: vals})
		f.DTypes[s.name] = *e.DType
	}
	return f, nil
}

// splitObject splits a JSON object into its keys and raw values, in
// order, rejecting a repeated key and anything after the object but
// whitespace.
func splitObject(b []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var values []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("key %v is not a string", tok)
		}
		if seen[k] {
			return nil, nil, fmt.Errorf("key %q appears twice", k)
		}
		seen[k] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", k, err)
		}
		keys = append(keys, k)
		values = append(values, v)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the JSON object")
	}
	return keys, values, nil
}

// decode converts little-endian values of dtype to float64, rejecting NaN
// and infinities.
func decode(dtype string, b []byte) ([]float64, error) {
	var out []float64
	switch dtype {
	case "F64":
		out = make([]float64, len(b)/8)
		for i := range out {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	case "F32":
		out = make([]float64, len(b)/4)
		for i := range out {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	case "F16":
		out = make([]float64, len(b)/2)
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case "BF16":
		out = make([]float64, len(b)/2)
		for i := range out {
			out[i] = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16))
		}
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("value %d is %v", i, v)
		}
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0: // zero or subnormal
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}
