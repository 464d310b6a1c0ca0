package scenarios

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"cclab/sim"
)

// decoder walks the generic JSON tree, converting values field by field and
// recording every problem with its path.
type decoder struct {
	errs errorList
}

func (d *decoder) add(path, format string, args ...any) { d.errs.add(path, format, args...) }

// fields is an object being read: take marks keys as known, finish reports
// the keys nobody took.
type fields struct {
	d    *decoder
	path string
	obj  *object
	used map[string]bool
}

// fields returns v as an object at path, or nil after recording an error.
func (d *decoder) fields(path string, v any) *fields {
	o, ok := v.(*object)
	if !ok {
		d.add(path, "want an object, got %s", describe(v))
		return nil
	}
	return &fields{d: d, path: path, obj: o, used: map[string]bool{}}
}

// take returns key's value and path and marks key as known; ok is false when
// the key is absent or null (null means "left out").
func (f *fields) take(key string) (any, string, bool) {
	f.used[key] = true
	v, ok := f.obj.get(key)
	return v, join(f.path, key), ok && v != nil
}

// has tells whether key is present and not null.
func (f *fields) has(key string) bool {
	v, ok := f.obj.get(key)
	return ok && v != nil
}

// require records "required" for each absent key.
func (f *fields) require(keys ...string) {
	for _, k := range keys {
		if !f.has(k) {
			f.d.add(join(f.path, k), "required")
		}
	}
}

// skip marks keys as known without reading them.
func (f *fields) skip(keys ...string) {
	for _, k := range keys {
		f.used[k] = true
	}
}

// skipAll marks every key as known (used when the object's kind is invalid,
// so its other keys cannot be judged).
func (f *fields) skipAll() {
	for _, k := range f.obj.keys {
		f.used[k] = true
	}
}

// finish records an error for every key that was not taken.
func (f *fields) finish() {
	for _, k := range f.obj.keys {
		if !f.used[k] {
			f.d.add(join(f.path, k), "unknown field")
		}
	}
}

// Value conversions. Each returns ok=false after recording an error.

func (d *decoder) str(path string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.add(path, "want a string, got %s", describe(v))
	}
	return s, ok
}

func (d *decoder) boolean(path string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.add(path, "want true or false, got %s", describe(v))
	}
	return b, ok
}

func (d *decoder) list(path string, v any) ([]any, bool) {
	l, ok := v.([]any)
	if !ok {
		d.add(path, "want a list, got %s", describe(v))
	}
	return l, ok
}

// whole converts a whole number in [min, max].
func (d *decoder) whole(path string, v any, min, max int64) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.add(path, "want a whole number, got %s", describe(v))
		return 0, false
	}
	r, ok := ratFromJSON(string(n))
	switch {
	case !ok:
		d.add(path, "number out of range: %s", n)
		return 0, false
	case !r.IsInt():
		d.add(path, "want a whole number, got %s", n)
		return 0, false
	case !r.Num().IsInt64() && r.Sign() < 0:
		d.add(path, "must be at least %d, got %s", min, n)
		return 0, false
	case !r.Num().IsInt64():
		d.add(path, "must be at most %d, got %s", max, n)
		return 0, false
	}
	x := r.Num().Int64()
	if x < min {
		if min == 1 {
			d.add(path, "must be > 0, got %d", x)
		} else {
			d.add(path, "must be at least %d, got %d", min, x)
		}
		return 0, false
	}
	if x > max {
		d.add(path, "must be at most %d, got %d", max, x)
		return 0, false
	}
	return x, true
}

// number converts a finite JSON number.
func (d *decoder) number(path string, v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		d.add(path, "want a number, got %s", describe(v))
		return 0, false
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		d.add(path, "number out of range: %s", n)
		return 0, false
	}
	if x == 0 {
		x = 0 // no negative zero
	}
	return x, true
}

// quantity converts a time, size or rate: a string with a unit, or a bare
// number in the SI base unit.
func (d *decoder) quantity(path string, v any, q *quantity) (int64, bool) {
	var x int64
	var msg string
	switch t := v.(type) {
	case string:
		x, msg = q.parseString(t)
	case json.Number:
		x, msg = q.parseNumber(string(t))
	default:
		msg = fmt.Sprintf("want a %s such as %s, got %s", q.what, q.example, describe(v))
	}
	if msg != "" {
		d.add(path, "%s", msg)
		return 0, false
	}
	return x, true
}

// Field readers: an absent (or null) key gives def. On a bad value the error
// is recorded and def is returned.

func (f *fields) str(key, def string) string {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	if s, ok := f.d.str(p, v); ok {
		return s
	}
	return def
}

// enum reads a string that must be one of allowed.
func (f *fields) enum(key, def string, allowed ...string) string {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	s, ok := f.d.str(p, v)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	f.d.add(p, "unknown value %q (want %s)", s, strings.Join(allowed, ", "))
	return def
}

func (f *fields) boolean(key string, def bool) bool {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	if b, ok := f.d.boolean(p, v); ok {
		return b
	}
	return def
}

func (f *fields) whole(key string, def, min, max int64) int64 {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	if x, ok := f.d.whole(p, v, min, max); ok {
		return x
	}
	return def
}

// count reads a whole number in [min, max] as an int.
func (f *fields) count(key string, def, min, max int) int {
	return int(f.whole(key, int64(def), int64(min), int64(max)))
}

// fraction reads a number in [lo, hi], or (lo, hi] when openLo.
func (f *fields) fraction(key string, def, lo, hi float64, openLo bool) float64 {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	x, ok := f.d.number(p, v)
	if !ok {
		return def
	}
	if x < lo || x > hi || (openLo && x == lo) {
		open := "["
		if openLo {
			open = "("
		}
		f.d.add(p, "must be in %s%g, %g], got %g", open, lo, hi, x)
		return def
	}
	return x
}

// time reads a time >= 0; positive also refuses 0.
func (f *fields) time(key string, def sim.Time, positive bool) sim.Time {
	return sim.Time(f.quantity(key, int64(def), timeQuantity, positive))
}

// size reads a size >= 0; positive also refuses 0.
func (f *fields) size(key string, def int64, positive bool) int64 {
	return f.quantity(key, def, sizeQuantity, positive)
}

// rate reads a rate > 0.
func (f *fields) rate(key string, def int64) int64 {
	return f.quantity(key, def, rateQuantity, true)
}

func (f *fields) quantity(key string, def int64, q *quantity, positive bool) int64 {
	v, p, ok := f.take(key)
	if !ok {
		return def
	}
	x, ok := f.d.quantity(p, v, q)
	if !ok {
		return def
	}
	if positive && x == 0 {
		f.d.add(p, "must be > 0")
		return def
	}
	return x
}

// link reads a link object {rate, delay}; absent members (or an absent
// object) take DefaultLinkRate and DefaultLinkDelay.
func (f *fields) link(key string) Link {
	l := Link{Rate: DefaultLinkRate, Delay: DefaultLinkDelay}
	v, p, ok := f.take(key)
	if !ok {
		return l
	}
	lf := f.d.fields(p, v)
	if lf == nil {
		return l
	}
	l.Rate = lf.rate("rate", DefaultLinkRate)
	l.Delay = lf.time("delay", DefaultLinkDelay, false)
	lf.finish()
	return l
}
