package scenarios

import (
	"encoding/json"
	"strconv"
	"strings"

	"cclab/sim"
)

// ApplySets applies command-line overrides "path=value" to a scenario
// document, in order, and returns the edited document (indented JSON, other
// keys kept in their order; it is not validated: Parse does that).
//
// A path is keys joined by dots, each optionally followed by list indexes:
// "cc.params.wr", "topology.hostLink.rate", "workload[0].flows[1].size".
// Missing objects along the path are created; an index may be the list's
// length, which appends. The value is parsed as JSON ("10", "true",
// "\"40Gbps\"", "{...}", "null" to leave a field out); anything that is not
// JSON is taken as a string (40Gbps). Errors are *Error values naming the
// path.
func ApplySets(data []byte, sets []string) ([]byte, error) {
	var errs errorList
	tree, err := decodeJSON(data, &errs)
	if err != nil {
		return nil, &Error{Errors: []FieldError{{Error: err.Error()}}}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	if _, ok := tree.(*object); !ok {
		return nil, fieldErr("", "want a JSON object, got %s", describe(tree))
	}
	for _, set := range sets {
		path, raw, found := strings.Cut(set, "=")
		if !found {
			return nil, fieldErr(path, "want path=value, got %q", set)
		}
		steps, err := parsePath(path)
		if err != nil {
			return nil, err
		}
		tree, err = setPath(tree, steps, 0, setValue(raw))
		if err != nil {
			return nil, err
		}
	}
	return encodeJSON(tree)
}

// setValue parses a --set value: JSON when it is JSON, else the raw string.
func setValue(raw string) any {
	var errs errorList
	v, err := decodeJSON([]byte(raw), &errs)
	if err != nil || errs.count() > 0 || strings.TrimSpace(raw) == "" {
		return raw
	}
	return v
}

// step is one element of a --set path: a key, or a list index.
type step struct {
	key   string
	index int // -1 for a key
	path  string
}

// parsePath splits "a.b[2].c" into steps.
func parsePath(path string) ([]step, error) {
	if path == "" {
		return nil, fieldErr("", "empty path in --set")
	}
	var steps []step
	prefix := ""
	for _, seg := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(seg, "[")
		if key == "" {
			return nil, fieldErr(path, "invalid path: empty key")
		}
		prefix = join(prefix, key)
		steps = append(steps, step{key: key, index: -1, path: prefix})
		if rest == "" && !strings.Contains(seg, "[") {
			continue
		}
		rest = "[" + rest
		for rest != "" {
			if !strings.HasPrefix(rest, "[") {
				return nil, fieldErr(path, "invalid path near %q", rest)
			}
			end := strings.Index(rest, "]")
			if end < 0 {
				return nil, fieldErr(path, "invalid path: missing ]")
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return nil, fieldErr(path, "invalid list index %q", rest[1:end])
			}
			prefix = index(prefix, n)
			steps = append(steps, step{index: n, path: prefix})
			rest = rest[end+1:]
		}
	}
	return steps, nil
}

// setPath returns cur with the value at steps[i:] replaced by v.
func setPath(cur any, steps []step, i int, v any) (any, error) {
	if i == len(steps) {
		return v, nil
	}
	st := steps[i]
	if st.index < 0 {
		obj, ok := cur.(*object)
		if cur == nil {
			obj = newObject()
		} else if !ok {
			return nil, fieldErr(parentPath(steps, i), "cannot set %q: the value there is %s, not an object", st.key, describe(cur))
		}
		child, _ := obj.get(st.key)
		nv, err := setPath(child, steps, i+1, v)
		if err != nil {
			return nil, err
		}
		obj.set(st.key, nv)
		return obj, nil
	}
	list, ok := cur.([]any)
	if cur == nil {
		return nil, fieldErr(parentPath(steps, i), "no list there to index (set the whole list instead)")
	}
	if !ok {
		return nil, fieldErr(parentPath(steps, i), "cannot index: the value there is %s, not a list", describe(cur))
	}
	if st.index > len(list) {
		return nil, fieldErr(st.path, "index out of range (the list has %d entries)", len(list))
	}
	var child any
	if st.index < len(list) {
		child = list[st.index]
	}
	nv, err := setPath(child, steps, i+1, v)
	if err != nil {
		return nil, err
	}
	if st.index == len(list) {
		return append(list, nv), nil
	}
	list[st.index] = nv
	return list, nil
}

func parentPath(steps []step, i int) string {
	if i == 0 {
		return ""
	}
	return steps[i-1].path
}

// SetAlgorithm implements --algo: it replaces the scenario's cc object by
// {"algorithm": name} (the old preset and parameters belong to the old
// algorithm). Per-workload and per-flow cc objects are kept. The name is
// checked by Parse.
func SetAlgorithm(data []byte, name string) ([]byte, error) {
	v, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	return ApplySets(data, []string{`cc={"algorithm":` + string(v) + `}`})
}

// SetSeed implements --seed: it sets the scenario's seed.
func SetSeed(data []byte, seed uint64) ([]byte, error) {
	return ApplySets(data, []string{"seed=" + strconv.FormatUint(seed, 10)})
}

// InsertParamsEvent records a live parameter change as a scripted event: it
// adds {"at": at, "params": params} to the scenario's events, before the
// first event at or after that time (so that replaying the scenario applies
// the change before anything else scheduled at that instant, exactly as the
// live change was), and returns the edited document and the event's index.
// params is a JSON object of parameter values as a scenario writes them;
// Parse checks them and names a bad one as events[index].params.NAME.
func InsertParamsEvent(data []byte, at sim.Time, params []byte) ([]byte, int, error) {
	var errs errorList
	tree, err := decodeJSON(data, &errs)
	if err != nil {
		return nil, 0, &Error{Errors: []FieldError{{Error: err.Error()}}}
	}
	root, ok := tree.(*object)
	if !ok {
		return nil, 0, fieldErr("", "want a JSON object, got %s", describe(tree))
	}
	pv, err := decodeJSON(params, &errs)
	if err != nil {
		return nil, 0, &Error{Errors: []FieldError{{Error: err.Error()}}}
	}
	if err := errs.err(); err != nil {
		return nil, 0, err
	}
	if _, ok := pv.(*object); !ok {
		return nil, 0, fieldErr("", "want a JSON object of parameter values, got %s", describe(pv))
	}
	var events []any
	if v, ok := root.get("events"); ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, 0, fieldErr("events", "want a list, got %s", describe(v))
		}
		events = list
	}
	pos := len(events)
	for i, e := range events {
		o, ok := e.(*object)
		if !ok {
			continue
		}
		s, ok := o.vals["at"].(string)
		if !ok {
			continue
		}
		t, err := ParseTime(s)
		if err == nil && t >= at {
			pos = i
			break
		}
	}
	ev := newObject()
	ev.set("at", formatTime(at))
	ev.set("params", pv)
	events = append(events, nil)
	copy(events[pos+1:], events[pos:])
	events[pos] = ev
	root.set("events", events)
	out, err := encodeJSON(root)
	return out, pos, err
}

// LookupPath finds the value at a --set path ("cc.params.g",
// "workload[0].load") in a document decoded by encoding/json (maps and
// slices); found is false when the path leads nowhere, and the error is a
// malformed path, named like ApplySets names it.
func LookupPath(doc any, path string) (v any, found bool, err error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, false, err
	}
	cur := doc
	for _, st := range steps {
		if st.index < 0 {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false, nil
			}
			if cur, ok = m[st.key]; !ok {
				return nil, false, nil
			}
			continue
		}
		a, ok := cur.([]any)
		if !ok || st.index >= len(a) {
			return nil, false, nil
		}
		cur = a[st.index]
	}
	return cur, true, nil
}
