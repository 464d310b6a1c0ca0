package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A generic JSON tree that keeps the order of object keys, so the editing
// helpers (ApplySets, SetAlgorithm, SetSeed) change only what they are asked
// to. Values are *object, []any, string, json.Number, bool or nil.

// object is a JSON object with its keys in document order.
type object struct {
	keys []string
	vals map[string]any
}

func newObject() *object { return &object{vals: map[string]any{}} }

// get returns the value of key and whether the key is present.
func (o *object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set adds or replaces key, keeping its place when it exists.
func (o *object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// maxDepth bounds the nesting of a scenario document; real scenarios nest
// five or six levels.
const maxDepth = 64

// decodeJSON parses one JSON document strictly: exactly one value, numbers
// kept as text. A syntax error is returned as err; duplicate keys are
// reported in errs (the last value wins) and do not stop the parse.
func decodeJSON(data []byte, errs *errorList) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &jsonParser{dec: dec, errs: errs}
	v, err := p.value("", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("invalid JSON: unexpected data after the top-level value at byte %d", dec.InputOffset())
	}
	return v, nil
}

type jsonParser struct {
	dec  *json.Decoder
	errs *errorList
}

func (p *jsonParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err == io.EOF {
		return nil, errors.New("invalid JSON: unexpected end of input")
	}
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %v (near byte %d)", err, p.dec.InputOffset())
	}
	return tok, nil
}

func (p *jsonParser) value(path string, depth int) (any, error) {
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("invalid JSON: nested deeper than %d levels at %s", maxDepth, orRoot(path))
	}
	switch d {
	case '{':
		o := newObject()
		for p.dec.More() {
			kt, err := p.token()
			if err != nil {
				return nil, err
			}
			key, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("invalid JSON: object key is not a string at %s", orRoot(path))
			}
			v, err := p.value(join(path, key), depth+1)
			if err != nil {
				return nil, err
			}
			if _, dup := o.get(key); dup && p.errs != nil {
				p.errs.add(join(path, key), "duplicate key")
			}
			o.set(key, v)
		}
		if _, err := p.token(); err != nil { // '}'
			return nil, err
		}
		return o, nil
	case '[':
		list := []any{}
		for p.dec.More() {
			v, err := p.value(index(path, len(list)), depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := p.token(); err != nil { // ']'
			return nil, err
		}
		return list, nil
	}
	return nil, fmt.Errorf("invalid JSON: unexpected %q near byte %d", rune(d), p.dec.InputOffset())
}

func orRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// encodeJSON writes a generic tree back as indented JSON, keys in order.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case json.Number:
		buf.WriteString(string(x))
	case string:
		writeString(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case *object:
		buf.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeJSON(buf, x.vals[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		return fmt.Errorf("scenarios: cannot encode %T", v)
	}
	return nil
}

// writeString writes a JSON string without HTML escaping ("s0->s1" stays
// readable).
func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// describe names a generic value for "want X, got Y" messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case json.Number:
		return string(x)
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("%q", x)
	case []any:
		return "a list"
	case *object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
