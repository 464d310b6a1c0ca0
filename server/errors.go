package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"cclab/server/runs"
	"cclab/store"
)

// fieldError is one problem, named by the request field it is about.
type fieldError struct {
	Field string `json:"field"`
	Error string `json:"error"`
}

// apiError is every 4xx the API answers: the contract's error shape, with
// the first problem also at the top level. Limit names the server limit a
// refused request ran into (admission control, per-client quotas).
type apiError struct {
	Status int          `json:"-"`
	Msg    string       `json:"error"`
	Field  string       `json:"field"`
	Limit  string       `json:"limit,omitempty"`
	Errors []fieldError `json:"errors"`
	// RetryAfter is when a refused request may be tried again, in seconds
	// (the Retry-After header of a 429; 5 when a limit does not say).
	RetryAfter int `json:"retryAfter,omitempty"`
}

func (e *apiError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// errorf is a one-problem apiError.
func errorf(status int, field, format string, args ...any) *apiError {
	msg := fmt.Sprintf(format, args...)
	return &apiError{Status: status, Msg: msg, Field: field, Errors: []fieldError{{Field: field, Error: msg}}}
}

// limitError is a request refused by a server limit (admission control).
func limitError(status int, limit, field, format string, args ...any) *apiError {
	e := errorf(status, field, format, args...)
	e.Limit = limit
	return e
}

// runError is a run package error as the API answers it: each kind with
// its status code.
func runError(re *runs.Error) *apiError {
	status := http.StatusUnprocessableEntity
	switch re.Kind {
	case runs.NotFound:
		status = http.StatusNotFound
	case runs.Conflict:
		status = http.StatusConflict
	case runs.TooMany:
		status = http.StatusTooManyRequests
	case runs.Unavailable:
		status = http.StatusServiceUnavailable
	}
	e := &apiError{Status: status, Msg: re.Msg(), Field: re.Field(), Limit: re.Limit}
	for _, f := range re.Errors {
		e.Errors = append(e.Errors, fieldError{Field: f.Field, Error: f.Msg})
	}
	return e
}

// invalid turns a scenario or engine validation error into a 422 listing
// every problem, each field prefixed with prefix (the place of the scenario
// in the request body, e.g. "scenario"). Other errors are returned as they
// are.
func invalid(err error, prefix string) error {
	return asAPIError(runs.InvalidScenario(err, prefix))
}

// asAPIError maps a run package error to its API form; other errors are
// returned as they are.
func asAPIError(err error) error {
	var re *runs.Error
	if errors.As(err, &re) {
		return runError(re)
	}
	return err
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError answers an error: an *apiError as itself, a missing store row
// as 404, anything else as a 500 that is logged (it is a bug or the disk,
// never the client's input).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var re *runs.Error
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &re):
		ae = runError(re)
	case errors.Is(err, store.ErrNotFound):
		ae = errorf(http.StatusNotFound, "id", "%s", notFoundMessage(err))
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = errorf(http.StatusInternalServerError, "", "internal error: %v", err)
	}
	if ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable {
		if ae.RetryAfter <= 0 {
			ae.RetryAfter = 5
		}
		w.Header().Set("Retry-After", retryAfterHeader(ae))
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cclab instructor"`)
	}
	writeJSON(w, ae.Status, ae)
}

func notFoundMessage(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Msg
	}
	return err.Error()
}

// decodeBody reads a JSON request body of at most limit bytes into v,
// strictly: unknown fields and trailing data are errors.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	return decodeStrict(body, v)
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, limitError(http.StatusRequestEntityTooLarge, "max-body", "",
				"request body over this server's limit of %d bytes", mbe.Limit)
		}
		return nil, errorf(http.StatusBadRequest, "", "reading the request body: %v", err)
	}
	return data, nil
}

func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "", "invalid JSON: unexpected data after the top-level value")
	}
	return nil
}

// jsonError names the field a JSON decoding error is about, when it can.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		// the body itself (every body this server decodes is an object)
		return errorf(http.StatusUnprocessableEntity, "", "want a JSON object, got JSON %s", te.Value)
	case errors.As(err, &te):
		return errorf(http.StatusUnprocessableEntity, te.Field, "want %s, got JSON %s", te.Type, te.Value)
	case errors.As(err, &se):
		return errorf(http.StatusBadRequest, "", "invalid JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "", "empty request body: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "", "invalid JSON: the document ends early")
	}
	var unknown string
	if _, e := fmt.Sscanf(err.Error(), "json: unknown field %q", &unknown); e == nil {
		if unknown == "" {
			unknown = `""` // named, as the scenarios name an empty key
		}
		return errorf(http.StatusUnprocessableEntity, unknown, "unknown field %q", unknown)
	}
	return errorf(http.StatusBadRequest, "", "invalid JSON: %v", err)
}
