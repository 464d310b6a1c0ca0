package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/scenarios"
	"cclab/server/training"
	"cclab/sim/rl"
	"cclab/store"
	"cclab/web"
)

// Training jobs: `cclab train` on the server, within caps that keep one
// student from holding it for hours.
const (
	maxTrainEpisodes = 5000
	maxTrainHidden   = 64
	maxTrainSize     = 20_000_000
	maxTrainFanIn    = 32
	maxTrainStages   = 8
	maxTrainUpdates  = 100
)

// trainRequest is the body of POST /api/train; a field left out takes
// rl.DefaultConfig's value.
type trainRequest struct {
	Algo          string          `json:"algo"`
	Name          string          `json:"name"`
	Episodes      *int            `json:"episodes"`
	Hidden        *int            `json:"hidden"`
	Seed          *uint64         `json:"seed"`
	StageEpisodes *int            `json:"stageEpisodes"`
	Stages        json.RawMessage `json:"stages"` // "2,4,8" or [2, 4, 8]
	Size          json.RawMessage `json:"size"`   // "2MB" or bytes
	Updates       *int            `json:"updates"`
	EvalEvery     *int            `json:"evalEvery"`
}

// config checks the request against the caps and turns it into a
// training configuration; every problem is a 422 naming its field.
func (q *trainRequest) config() (rl.Config, error) {
	bad := func(field, format string, a ...any) (rl.Config, error) {
		return rl.Config{}, errorf(http.StatusUnprocessableEntity, field, format, a...)
	}
	if q.Algo != "fdcc" && q.Algo != "rlcc" {
		return bad("algo", "want fdcc or rlcc, got %q", q.Algo)
	}
	if err := checkPolicyName("name", q.Name); err != nil {
		return rl.Config{}, err
	}
	cfg := rl.DefaultConfig(q.Algo)
	ints := []struct {
		field    string
		v        *int
		dst      *int
		min, max int
	}{
		{"episodes", q.Episodes, &cfg.Episodes, 1, maxTrainEpisodes},
		{"hidden", q.Hidden, &cfg.Hidden, 1, maxTrainHidden},
		{"stageEpisodes", q.StageEpisodes, &cfg.StageEpisodes, 1, maxTrainEpisodes},
		{"updates", q.Updates, &cfg.Updates, 0, maxTrainUpdates},
		{"evalEvery", q.EvalEvery, &cfg.EvalEvery, 0, maxTrainEpisodes},
	}
	for _, f := range ints {
		if f.v == nil {
			continue
		}
		if *f.v < f.min || *f.v > f.max {
			return bad(f.field, "%d is not in [%d, %d]", *f.v, f.min, f.max)
		}
		*f.dst = *f.v
	}
	if q.Seed != nil {
		cfg.Seed = *q.Seed
	}
	if len(q.Stages) > 0 && string(q.Stages) != "null" {
		st, err := parseStages(q.Stages)
		if err != nil {
			return bad("stages", "%v", err)
		}
		cfg.Stages = st
	}
	if len(cfg.Stages) > maxTrainStages {
		return bad("stages", "%d fan-ins, at most %d", len(cfg.Stages), maxTrainStages)
	}
	for _, n := range cfg.Stages {
		if n < 1 || n > maxTrainFanIn {
			return bad("stages", "fan-in %d is not in [1, %d]", n, maxTrainFanIn)
		}
	}
	if len(q.Size) > 0 && string(q.Size) != "null" {
		var n float64
		var str string
		switch {
		case json.Unmarshal(q.Size, &n) == nil:
			if n != math.Trunc(n) {
				return bad("size", "want whole bytes, got %v", n)
			}
		case json.Unmarshal(q.Size, &str) == nil:
			b, err := scenarios.ParseSize(str)
			if err != nil {
				return bad("size", "%v", err)
			}
			n = float64(b)
		default:
			return bad("size", "want a size such as \"2MB\" or a number of bytes")
		}
		if n < 1000 || n > maxTrainSize {
			return bad("size", "%.0f bytes is not in [1000, %d]", n, maxTrainSize)
		}
		cfg.Size = int64(n)
	}
	return cfg, nil
}

// parseStages reads the curriculum: "2,4,8" or [2, 4, 8].
func parseStages(raw json.RawMessage) ([]int, error) {
	var list []int
	if json.Unmarshal(raw, &list) == nil {
		if len(list) == 0 {
			return nil, errors.New("want at least one fan-in")
		}
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, errors.New(`want fan-ins such as "2,4,8" or [2, 4, 8]`)
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a fan-in", strings.TrimSpace(f))
		}
		list = append(list, n)
	}
	return list, nil
}

// trainJSON is a training job as the API answers it.
type trainJSON struct {
	ID          string            `json:"id"`
	Mine        bool              `json:"mine"` // the requester may cancel and resume it (its owner, or an instructor)
	Name        string            `json:"name"`
	Algo        string            `json:"algo"`
	Status      string            `json:"status"`
	Error       string            `json:"error,omitempty"`
	CreatedAt   time.Time         `json:"createdAt"`
	StartedAt   *time.Time        `json:"startedAt"`
	FinishedAt  *time.Time        `json:"finishedAt"`
	Episode     int               `json:"episode"`
	Episodes    int               `json:"episodes"`
	Stage       int               `json:"stage"`
	Config      trainConfigJSON   `json:"config"`
	Policy      string            `json:"policy,omitempty"` // the stored policy's id
	Interrupted bool              `json:"interrupted"`
	Resumable   bool              `json:"resumable"`
	Curve       []curvePoint      `json:"curve,omitempty"`
	Links       map[string]string `json:"links"`
}

type trainConfigJSON struct {
	Method        string `json:"method"` // td3 or adpg
	Episodes      int    `json:"episodes"`
	Hidden        int    `json:"hidden"`
	Seed          uint64 `json:"seed"`
	StageEpisodes int    `json:"stageEpisodes"`
	Stages        []int  `json:"stages"`
	Size          int64  `json:"size"`
	Updates       int    `json:"updates"`
	EvalEvery     int    `json:"evalEvery"`
	Round         int    `json:"round"`
	EvalFanIns    []int  `json:"evalFanIns"`
}

// curvePoint is one round of the learning curve (curve.csv's row); the
// stream's "round" message with its type.
type curvePoint struct {
	Type        string     `json:"type,omitempty"`
	Episode     int        `json:"episode"`
	FanIn       int        `json:"fanIn"`
	Reward      jsonNum    `json:"reward"`
	CriticLoss  jsonNum    `json:"criticLoss"`
	ActorLoss   jsonNum    `json:"actorLoss"`
	Q           jsonNum    `json:"q"`
	Steps       int        `json:"steps"`
	WallSeconds float64    `json:"wallSeconds"`
	Eval        *evalPoint `json:"eval,omitempty"`
}

// evalPoint is an evaluation: per evaluation fan-in (config.evalFanIns).
type evalPoint struct {
	Reward    jsonNum   `json:"reward"`
	Score     jsonNum   `json:"score"`
	Unfair    []jsonNum `json:"unfair"`
	PeakQueue []int64   `json:"peakQueueBytes"`
	Slowdown  []jsonNum `json:"slowdown"`
	Finished  []bool    `json:"finished"`
}

func trainView(j training.Job) trainJSON {
	c := j.Config
	v := trainJSON{ID: j.ID, Name: j.Name, Algo: c.Algo, Status: j.Status, Error: j.Error, CreatedAt: j.Created.UTC(),
		Episode: j.Episode, Episodes: c.Episodes, Stage: j.Stage, Policy: j.PolicyID, Interrupted: j.Interrupted, Resumable: j.Resumable,
		Config: trainConfigJSON{Method: c.Method, Episodes: c.Episodes, Hidden: c.Hidden, Seed: c.Seed, StageEpisodes: c.StageEpisodes,
			Stages: c.Stages, Size: c.Size, Updates: c.Updates, EvalEvery: c.EvalEvery, Round: c.Round},
		Links: map[string]string{"self": "/api/train/" + j.ID, "curve": "/api/train/" + j.ID + "/curve.csv", "ws": "/ws/train/" + j.ID}}
	for _, e := range c.Eval {
		v.Config.EvalFanIns = append(v.Config.EvalFanIns, e.FanIn)
	}
	if !j.Started.IsZero() {
		t := j.Started.UTC()
		v.StartedAt = &t
	}
	if !j.Ended.IsZero() {
		t := j.Ended.UTC()
		v.FinishedAt = &t
	}
	if j.PolicyID != "" {
		v.Links["policy"] = "/api/policies/" + j.PolicyID + "/policy.safetensors"
	}
	if j.Resumable {
		v.Links["resume"] = "/api/train/" + j.ID + "/resume"
	}
	for _, p := range j.Curve {
		v.Curve = append(v.Curve, curvePointOf(p))
	}
	return v
}

func curvePointOf(p rl.Progress) curvePoint {
	cp := curvePoint{Episode: p.Episode, FanIn: p.FanIn, Reward: jsonNum(p.Reward), CriticLoss: jsonNum(p.CriticLoss),
		ActorLoss: jsonNum(p.ActorLoss), Q: jsonNum(p.Q), Steps: p.Steps, WallSeconds: p.Wall.Seconds()}
	if e := p.Eval; e != nil {
		ep := &evalPoint{Reward: jsonNum(e.Reward), Score: jsonNum(e.Score), PeakQueue: e.PeakQ, Finished: e.Finished}
		for i := range e.Unfair {
			ep.Unfair = append(ep.Unfair, jsonNum(e.Unfair[i]))
			ep.Slowdown = append(ep.Slowdown, jsonNum(e.Slowdown[i]))
		}
		cp.Eval = ep
	}
	return cp
}

// trainError maps the training manager's errors to status codes.
func trainError(err error) error {
	switch {
	case errors.Is(err, training.ErrNotFound):
		return errorf(http.StatusNotFound, "id", "%v", err)
	case errors.Is(err, training.ErrConflict):
		return errorf(http.StatusConflict, "", "%v", err)
	case errors.Is(err, training.ErrTooMany):
		return limitError(http.StatusTooManyRequests, "max-train-queue", "", "%v", err)
	case errors.Is(err, training.ErrClosed):
		return errorf(http.StatusServiceUnavailable, "", "%v", err)
	}
	return err
}

func (s *Server) handleCreateTraining(w http.ResponseWriter, r *http.Request) {
	var req trainRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg, err := req.config()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.db.PolicyByName(r.Context(), req.Name); err == nil {
		s.writeError(w, r, errorf(http.StatusConflict, "name", "a policy named %q is stored already", req.Name))
		return
	}
	j, err := s.train.Submit(req.Name, cfg)
	if err != nil {
		var ae *apiError
		if !errors.As(trainError(err), &ae) {
			// rl's own checks: "rl: field: message"
			msg := strings.TrimPrefix(err.Error(), "rl: ")
			field, rest, _ := strings.Cut(msg, ": ")
			err = errorf(http.StatusUnprocessableEntity, rlFields[field], "%s", rest)
		} else {
			err = ae
		}
		s.writeError(w, r, err)
		return
	}
	if err := s.db.Claim(r.Context(), store.OwnedTrainJob, j.ID, who(r).owner); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.trainViewFor(r, j))
}

// trainViewFor is a job's API form for the requester (mine).
func (s *Server) trainViewFor(r *http.Request, j training.Job) trainJSON {
	v := trainView(j)
	v.Mine = s.mayChangeJob(r, j.ID) == nil
	return v
}

// mayChangeJob lets the owner of a training job, or an instructor, stop or
// resume it.
func (s *Server) mayChangeJob(r *http.Request, id string) error {
	owner, err := s.db.Owner(r.Context(), store.OwnedTrainJob, id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "id", "no training job %q", id)
	}
	if err != nil {
		return err
	}
	return mayChange(r, owner, "training job "+id)
}

// mayChangePolicy lets the owner of a policy (its uploader, or the owner
// of the training job that made it), or an instructor, delete it.
func (s *Server) mayChangePolicy(r *http.Request, id string) error {
	owner, err := s.db.Owner(r.Context(), store.OwnedPolicy, id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "id", "no policy %s", id)
	}
	if err != nil {
		return err
	}
	if owner == "" {
		if p, err := s.db.GetPolicy(r.Context(), id); err == nil && p.Source != "upload" {
			if o, err := s.db.Owner(r.Context(), store.OwnedTrainJob, p.Source); err == nil {
				owner = o
			}
		}
	}
	return mayChange(r, owner, "policy "+id)
}

// rlFields are rl.Config's error names as this API's fields.
var rlFields = map[string]string{"hidden": "hidden", "episodes": "episodes", "updates": "updates", "stages": "stages",
	"stage-episodes": "stageEpisodes", "size": "size"}

func (s *Server) handleListTraining(w http.ResponseWriter, r *http.Request) {
	list, err := s.train.List(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]trainJSON, 0, len(list))
	for _, j := range list {
		out = append(out, s.trainViewFor(r, j))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGetTraining(w http.ResponseWriter, r *http.Request) {
	j, err := s.train.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, trainError(err))
		return
	}
	writeJSON(w, http.StatusOK, s.trainViewFor(r, j))
}

func (s *Server) handleCancelTraining(w http.ResponseWriter, r *http.Request) {
	if err := s.mayChangeJob(r, chi.URLParam(r, "id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, err := s.train.Cancel(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, trainError(err))
		return
	}
	writeJSON(w, http.StatusOK, s.trainViewFor(r, j))
}

func (s *Server) handleResumeTraining(w http.ResponseWriter, r *http.Request) {
	if err := s.mayChangeJob(r, chi.URLParam(r, "id")); err != nil {
		s.writeError(w, r, err)
		return
	}
	j, err := s.train.Resume(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, trainError(err))
		return
	}
	writeJSON(w, http.StatusOK, s.trainViewFor(r, j))
}

func (s *Server) handleTrainingCurve(w http.ResponseWriter, r *http.Request) {
	j, err := s.train.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, trainError(err))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", j.Name+"-curve.csv"))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(rl.CurveCSV(j.Curve, j.Config.Eval))
}

// handleTrainPage is the training page: the form's defaults and the caps.
func (s *Server) handleTrainPage(w http.ResponseWriter, r *http.Request) {
	algos := map[string]web.TrainDefaults{}
	for _, algo := range []string{"fdcc", "rlcc"} {
		def := rl.DefaultConfig(algo)
		stages := make([]string, len(def.Stages))
		for i, n := range def.Stages {
			stages[i] = strconv.Itoa(n)
		}
		algos[algo] = web.TrainDefaults{Episodes: min(def.Episodes, maxTrainEpisodes), Hidden: def.Hidden,
			StageEpisodes: def.StageEpisodes, Stages: strings.Join(stages, ","), Size: sizeText(def.Size)}
	}
	f := algos["fdcc"]
	s.render(w, r, web.TrainView(web.TrainPage{Episodes: f.Episodes, Hidden: f.Hidden, Seed: rl.DefaultConfig("fdcc").Seed,
		StageEpisodes: f.StageEpisodes, Stages: f.Stages, Size: f.Size,
		MaxEpisodes: maxTrainEpisodes, MaxHidden: maxTrainHidden, MaxFileBytes: maxPolicyBytes, Algos: algos}))
}

// sizeText writes bytes as the form shows a size ("2MB", "20KB").
func sizeText(b int64) string {
	switch {
	case b%1_000_000 == 0:
		return strconv.FormatInt(b/1_000_000, 10) + "MB"
	case b%1000 == 0:
		return strconv.FormatInt(b/1000, 10) + "KB"
	}
	return strconv.FormatInt(b, 10) + "B"
}
