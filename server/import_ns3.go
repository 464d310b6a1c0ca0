package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"cclab/scenarios"
	"cclab/scenarios/ns3"
)

// maxNS3ImportBytes caps an ns-3 import upload (the three files and the
// form around them): about a million flows. A variable so that a test can
// lower it.
var maxNS3ImportBytes int64 = 32 << 20

// ns3ImportView is the answer to POST /api/import/ns3: the scenario
// document, and the config keys the lab does not understand (warnings,
// each "file:line: KEY: ...") or reads and ignores (ignored, each "KEY:
// why").
type ns3ImportView struct {
	Scenario json.RawMessage `json:"scenario"`
	Warnings []string        `json:"warnings"`
	Ignored  []string        `json:"ignored"`
}

// ns3ImportError is a 422 about one line of one uploaded file: the
// contract's error shape with the file and line beside the field.
type ns3ImportError struct {
	Msg    string       `json:"error"`
	Field  string       `json:"field"`
	File   string       `json:"file"`
	Line   int          `json:"line"`
	Errors []fieldError `json:"errors"`
}

// handleImportNS3 turns an HPCC ns-3 experiment uploaded as a multipart
// form (parts config, topology and flows) into a scenario document. It
// stores nothing: the lab page opens the result in its editor.
func (s *Server) handleImportNS3(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		s.writeError(w, r, errorf(http.StatusUnsupportedMediaType, "", "want a multipart/form-data upload with the parts config, topology and flows"))
		return
	}
	tooBig := limitError(http.StatusRequestEntityTooLarge, "max-import-size", "",
		"request body over this route's limit of %d bytes for an ns-3 import (config, topology and flow files)", maxNS3ImportBytes)
	r.Body = http.MaxBytesReader(w, r.Body, maxNS3ImportBytes)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.writeError(w, r, tooBig)
			return
		}
		s.writeError(w, r, errorf(http.StatusBadRequest, "", "reading the request body: not a multipart form with the parts config, topology and flows: %v", err))
		return
	}
	defer r.MultipartForm.RemoveAll()
	var files [3]ns3.File
	for i, part := range []string{"config", "topology", "flows"} {
		f, h, err := r.FormFile(part)
		if err != nil {
			s.writeError(w, r, errorf(http.StatusUnprocessableEntity, part, "want the %s file in the form's %q part", part, part))
			return
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			s.writeError(w, r, errorf(http.StatusBadRequest, part, "reading the file: %v", err))
			return
		}
		name := h.Filename
		if name == "" {
			name = part
		}
		files[i] = ns3.File{Name: name, Data: data}
	}
	name := r.FormValue("name")
	if name == "" {
		name = "ns3-import"
	}
	imp, err := ns3.FromFiles(name, files[0], files[1], files[2])
	var ne *ns3.Error
	if errors.As(err, &ne) {
		field := ne.Field
		if field == "" {
			field = "file" // a problem with the file as a whole
		}
		writeJSON(w, http.StatusUnprocessableEntity, ns3ImportError{Msg: ne.Error(), Field: field, File: ne.File, Line: ne.Line,
			Errors: []fieldError{{Field: field, Error: ne.Error()}}})
		return
	}
	if err != nil {
		s.writeError(w, r, fmt.Errorf("importing ns-3 files: %w", err))
		return
	}
	if _, err := scenarios.Parse(imp.Scenario); err != nil {
		s.writeError(w, r, invalid(err, "scenario"))
		return
	}
	v := ns3ImportView{Scenario: imp.Scenario, Warnings: imp.Warnings(), Ignored: imp.Ignored}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	if v.Ignored == nil {
		v.Ignored = []string{}
	}
	writeJSON(w, http.StatusOK, v)
}
