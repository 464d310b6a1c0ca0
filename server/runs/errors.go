package runs

import (
	"errors"
	"fmt"

	"cclab/scenarios"
	"cclab/sim"
)

// Kind classifies an Error for whoever reports it: the HTTP API maps each
// kind to a status code, the CLI prints the fields.
type Kind int

// Error kinds.
const (
	Invalid     Kind = iota + 1 // the input is wrong: a scenario, a parameter, a value
	NotFound                    // no such run or scenario
	Conflict                    // the run is not in a state for that
	Refused                     // a run over an admission limit (Limit names it)
	TooMany                     // a per-client, queue or live-change limit (Limit names it)
	Unavailable                 // the manager is shutting down
)

// FieldError is one problem, named by the field it is about (a scenario
// path, a parameter, a request field; empty for the whole input).
type FieldError struct {
	Field string
	Msg   string
}

// Error is a problem the run package reports: a kind, the server limit a
// refusal ran into (its flag name, e.g. "max-flows"), and at least one
// field problem, the first being the headline.
type Error struct {
	Kind   Kind
	Limit  string
	Errors []FieldError
}

func (e *Error) Error() string {
	f := e.Errors[0]
	if f.Field == "" {
		return f.Msg
	}
	return f.Field + ": " + f.Msg
}

// Field is the headline problem's field.
func (e *Error) Field() string { return e.Errors[0].Field }

// Msg is the headline problem's message.
func (e *Error) Msg() string { return e.Errors[0].Msg }

// errorf is a one-problem Error.
func errorf(kind Kind, field, format string, args ...any) *Error {
	return &Error{Kind: kind, Errors: []FieldError{{Field: field, Msg: fmt.Sprintf(format, args...)}}}
}

// limited is a refusal by a server limit.
func limited(kind Kind, limit, field, format string, args ...any) *Error {
	e := errorf(kind, field, format, args...)
	e.Limit = limit
	return e
}

// InvalidScenario turns a scenario or engine validation error into an
// Invalid Error listing every problem, each field prefixed with prefix
// (where the scenario sits in a request, e.g. "scenario"). Other errors
// are returned as they are.
func InvalidScenario(err error, prefix string) error {
	var se *scenarios.Error
	var fe *sim.FieldError
	join := func(f string) string {
		switch {
		case prefix == "":
			return f
		case f == "":
			return prefix
		default:
			return prefix + "." + f
		}
	}
	switch {
	case errors.As(err, &se):
		e := &Error{Kind: Invalid}
		for _, x := range se.Errors {
			e.Errors = append(e.Errors, FieldError{Field: join(x.Field), Msg: x.Error})
		}
		if len(e.Errors) == 0 {
			e.Errors = []FieldError{{Field: join(""), Msg: "invalid scenario"}}
		}
		return e
	case errors.As(err, &fe):
		return errorf(Invalid, join(fe.Field), "%s", fe.Msg)
	}
	return err
}
