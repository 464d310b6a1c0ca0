package scenarios

import (
	"fmt"
	"strconv"
)

// FieldError is one problem in a scenario, named by the path of the field it
// is about ("topology.hostLink.rate", "workload[2].flows[0].size"). Field is
// empty for a problem with the document as a whole (e.g. invalid JSON).
type FieldError struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

// String formats the problem as "field: error" (or only the error when it
// names no field).
func (e FieldError) String() string {
	if e.Field == "" {
		return e.Error
	}
	return e.Field + ": " + e.Error
}

// Error is what Parse, Build and the editing helpers return for an invalid
// scenario: every problem found, in the order found (document order within a
// section).
type Error struct {
	Errors []FieldError
}

// Error returns the first problem, and how many more there are.
func (e *Error) Error() string {
	if len(e.Errors) == 0 {
		return "invalid scenario"
	}
	s := e.Errors[0].String()
	if n := len(e.Errors) - 1; n > 0 {
		s += " (and " + strconv.Itoa(n) + " more)"
	}
	return s
}

// maxErrors bounds the problems collected for one document; the rest are
// counted in a final entry.
const maxErrors = 100

// errorList collects FieldErrors.
type errorList struct {
	list    []FieldError
	dropped int
}

func (l *errorList) add(field, format string, args ...any) {
	if len(l.list) >= maxErrors {
		l.dropped++
		return
	}
	l.list = append(l.list, FieldError{Field: field, Error: fmt.Sprintf(format, args...)})
}

// count is the number of problems seen so far; comparing counts tells whether
// a section added any.
func (l *errorList) count() int { return len(l.list) + l.dropped }

// err returns nil or an *Error holding every problem.
func (l *errorList) err() error {
	if l.count() == 0 {
		return nil
	}
	list := append([]FieldError(nil), l.list...)
	if l.dropped > 0 {
		list = append(list, FieldError{Error: fmt.Sprintf("%d more problems not shown", l.dropped)})
	}
	return &Error{Errors: list}
}

// fieldErr returns an *Error with a single problem.
func fieldErr(field, format string, args ...any) error {
	return &Error{Errors: []FieldError{{Field: field, Error: fmt.Sprintf(format, args...)}}}
}

// join builds a child path: join("topology", "hostLink") = "topology.hostLink".
// An empty key is written `""`, so that a problem with it names a field.
func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index builds an element path: index("workload", 2) = "workload[2]".
func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
