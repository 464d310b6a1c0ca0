package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/cc"
	"cclab/cc/fdcc"
	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/store"
)

// Stored policies: trained actors of the learned algorithms (fdcc, rlcc),
// uploaded or written by a training job, that any scenario run in the lab
// names in cc.policy. The shipped policy is listed as "default",
// read-only.

// maxPolicyBytes bounds an uploaded policy file (a hidden-64 actor is
// about 300 KB as F64).
const maxPolicyBytes = 4 << 20

// defaultPolicyID is the id (and name) of the shipped fdcc policy.
const defaultPolicyID = "default"

var policyName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// checkPolicyName validates a name for a new stored policy.
func checkPolicyName(field, name string) error {
	switch {
	case !policyName.MatchString(name):
		return errorf(http.StatusUnprocessableEntity, field, "want a name of 1 to 64 letters, digits, '-', '_' or '.', got %q", name)
	case name == defaultPolicyID:
		return errorf(http.StatusUnprocessableEntity, field, "%q is the shipped policy; choose another name", name)
	}
	return nil
}

// observations is the observation size of each learned algorithm's
// policy.
var observations = map[string]int{"fdcc": 8, "rlcc": 2}

// firstTensor is the actor's first layer: its columns are the
// observation size.
const firstTensor = "actor.mem_pre_lstm_layers.0.weight"

// checkPolicyFile loads a policy file and checks it fits algo (when algo
// is "", the file's own "algo" metadata says which). Its errors name the
// tensor when the file has a bad one.
func checkPolicyFile(data []byte, algo string) (*fdcc.Policy, map[string]string, string, error) {
	p, meta, err := fdcc.LoadPolicy(bytes.NewReader(data))
	if err != nil {
		return nil, nil, "", errorf(http.StatusBadRequest, "file", "%v", err)
	}
	if algo == "" {
		algo = meta["algo"]
		if algo == "" {
			return nil, nil, "", errorf(http.StatusUnprocessableEntity, "algorithm", "want the algorithm the policy is for: fdcc or rlcc (the file does not say)")
		}
	}
	want, ok := observations[algo]
	if !ok {
		return nil, nil, "", errorf(http.StatusUnprocessableEntity, "algorithm", "want fdcc or rlcc, got %q", algo)
	}
	if a := p.Arch(); a.Obs != want {
		return nil, nil, "", errorf(http.StatusBadRequest, "file", "tensor %s: observation size %d (shape [%d, %d]); %s's policy observes %d",
			firstTensor, a.Obs, a.Hidden, a.Obs, algo, want)
	}
	return p, meta, algo, nil
}

// policyJSON is a stored policy as the API lists it.
type policyJSON struct {
	ID        string            `json:"id"`
	Mine      bool              `json:"mine"` // the requester may delete it (its owner, or an instructor; never the shipped one)
	Name      string            `json:"name"`
	Algorithm string            `json:"algorithm"`
	CreatedAt *time.Time        `json:"createdAt"` // null for the shipped one
	Source    string            `json:"source"`    // a training job id, "upload" or "shipped"
	Builtin   bool              `json:"builtin"`
	Size      int64             `json:"size"`
	Meta      map[string]string `json:"meta"`
	Links     map[string]string `json:"links"`
}

func policyView(p *store.Policy, builtin bool) policyJSON {
	v := policyJSON{ID: p.ID, Name: p.Name, Algorithm: p.Algorithm, Source: p.Source, Builtin: builtin, Size: p.Size, Meta: p.Meta,
		Links: map[string]string{"file": "/api/policies/" + p.ID + "/policy.safetensors"}}
	if !builtin {
		t := p.Created.UTC()
		v.CreatedAt = &t
	}
	if v.Meta == nil {
		v.Meta = map[string]string{}
	}
	return v
}

// shippedPolicy is the shipped fdcc policy as a stored one (its file
// written once).
var shippedPolicy = sync.OnceValues(func() (*store.Policy, error) {
	data, err := fdcc.ShippedFile("fdcc")
	if err != nil {
		return nil, err
	}
	_, meta, err := fdcc.LoadPolicy(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return &store.Policy{ID: defaultPolicyID, Name: defaultPolicyID, Algorithm: "fdcc", Meta: meta, Source: "shipped",
		Size: int64(len(data)), Data: data}, nil
})

func (s *Server) handleListPolicies(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListPolicies(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]policyJSON, 0, len(list)+1)
	if sp, err := shippedPolicy(); err == nil {
		out = append(out, policyView(sp, true)) // listed once the lab ships one
	}
	for i := range list {
		v := policyView(&list[i], false)
		v.Mine = s.mayChangePolicy(r, v.ID) == nil
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// policy returns a stored policy, or the shipped one, with its file.
func (s *Server) policy(ctx context.Context, id string) (*store.Policy, error) {
	if id == defaultPolicyID {
		if p, err := shippedPolicy(); err == nil {
			return p, nil
		}
		return nil, errorf(http.StatusNotFound, "id", "this lab ships no fdcc policy yet")
	}
	p, err := s.db.GetPolicy(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "id", "no policy %s (GET /api/policies lists them)", id)
	}
	return p, err
}

func (s *Server) handleGetPolicy(w http.ResponseWriter, r *http.Request) {
	p, err := s.policy(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := policyView(p, p.ID == defaultPolicyID)
	v.Mine = !v.Builtin && s.mayChangePolicy(r, p.ID) == nil
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handlePolicyFile(w http.ResponseWriter, r *http.Request) {
	p, err := s.policy(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", p.Name+".safetensors"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(p.Data)
}

// handleUploadPolicy stores a policy file: the request body itself, or
// the "file" part of a multipart form; name and algorithm are query or
// form fields.
func (s *Server) handleUploadPolicy(w http.ResponseWriter, r *http.Request) {
	var data []byte
	field := func(k string) string { return strings.TrimSpace(r.URL.Query().Get(k)) }
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	tooBig := limitError(http.StatusRequestEntityTooLarge, "max-policy-size", "file",
		"a policy file is at most %d bytes", maxPolicyBytes)
	if mt == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxPolicyBytes+64<<10)
		if err := r.ParseMultipartForm(maxPolicyBytes + 64<<10); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.writeError(w, r, tooBig)
				return
			}
			s.writeError(w, r, errorf(http.StatusBadRequest, "file", "reading the form: %v", err))
			return
		}
		defer r.MultipartForm.RemoveAll()
		field = func(k string) string {
			if v := strings.TrimSpace(r.FormValue(k)); v != "" {
				return v
			}
			return strings.TrimSpace(r.URL.Query().Get(k))
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			s.writeError(w, r, errorf(http.StatusBadRequest, "file", "want the policy file in the form's \"file\" part: %v", err))
			return
		}
		data, err = io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
		f.Close()
		if err != nil {
			s.writeError(w, r, errorf(http.StatusBadRequest, "file", "reading the file: %v", err))
			return
		}
	} else {
		var err error
		data, err = io.ReadAll(io.LimitReader(r.Body, maxPolicyBytes+1))
		if err != nil {
			s.writeError(w, r, errorf(http.StatusBadRequest, "file", "reading the body: %v", err))
			return
		}
	}
	if len(data) > maxPolicyBytes {
		s.writeError(w, r, tooBig)
		return
	}
	name := field("name")
	if err := checkPolicyName("name", name); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(data) == 0 {
		s.writeError(w, r, errorf(http.StatusBadRequest, "file", "empty: want a policy file (safetensors, as `cclab train` writes)"))
		return
	}
	_, meta, algo, err := checkPolicyFile(data, field("algorithm"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p := &store.Policy{Name: name, Algorithm: algo, Meta: meta, Source: "upload", Data: data}
	err = s.db.PutPolicy(r.Context(), p)
	if err == nil {
		err = s.db.Claim(r.Context(), store.OwnedPolicy, p.ID, who(r).owner)
	}
	if err != nil {
		if errors.Is(err, store.ErrExists) {
			err = errorf(http.StatusConflict, "name", "a policy named %q is stored already", name)
		}
		s.writeError(w, r, err)
		return
	}
	v := policyView(p, false)
	v.Mine = true
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) handleDeletePolicy(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if id == defaultPolicyID {
		s.writeError(w, r, errorf(http.StatusForbidden, "id", "the shipped policy cannot be deleted"))
		return
	}
	if err := s.mayChangePolicy(r, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.db.DeletePolicy(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = errorf(http.StatusNotFound, "id", "no policy %s", id)
		}
		s.writeError(w, r, err)
		return
	}
	s.policies.Delete(id)
	w.WriteHeader(http.StatusNoContent)
}

// resolvePolicy is the scenarios' policy resolver: a name other than
// "default" is a stored policy, loaded once per id (a stored policy never
// changes).
func (s *Server) resolvePolicy(algo, name string) (cc.Policy, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec, err := s.db.PolicyByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no stored policy named %q (GET /api/policies lists them)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	if rec.Algorithm != algo {
		return nil, fmt.Errorf("policy %q was trained for %s, not %s", name, rec.Algorithm, algo)
	}
	if p, ok := s.policies.Load(rec.ID); ok {
		return p.(cc.Policy), nil
	}
	fp, _, err := fdcc.LoadPolicy(bytes.NewReader(rec.Data))
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	p, _ := s.policies.LoadOrStore(rec.ID, cc.Policy(cc.NetPolicy{P: fp}))
	return p.(cc.Policy), nil
}

// compile is runs.CompileWith with the server's policies.
func (s *Server) compile(doc []byte, prefix string) (*runs.Compiled, error) {
	return runs.CompileWith(doc, s.cfg.Limits, prefix, scenarios.BuildOptions{Policy: s.resolvePolicy})
}

// policyNames lists the stored policies of algo, by name.
func (s *Server) policyNames(ctx context.Context, algo string) []string {
	list, err := s.db.ListPolicies(ctx)
	if err != nil {
		s.log.Warn("listing policies", "err", err)
		return nil
	}
	var out []string
	for _, p := range list {
		if p.Algorithm == algo {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}
