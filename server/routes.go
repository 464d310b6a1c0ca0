package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/cc"
	"cclab/server/runs"
	"cclab/sim/report"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.recoverer, s.logRequests, securityHeaders, s.identify, s.crossSite)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusNotFound, "", "no route %s %s (see /api/openapi.json)", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusMethodNotAllowed, "", "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	s.pageRoutes(r)
	// the sweep pages (sweep_pages.go)
	r.Get("/sweeps", s.handleSweepsPage)
	r.Get("/sweeps/{id}", s.handleSweepPage)
	r.Get("/s/{id}/class", s.handleClassScenarioPage) // classview.go
	r.Route("/api", func(r chi.Router) {
		r.Get("/health", s.handleHealth)
		r.Post("/token", s.handleToken)
		r.Get("/whoami", s.handleWhoami)
		r.Get("/class", s.handleClass)
		r.Put("/class/limits", s.handleClassLimits)
		r.Post("/scenarios/{id}/feature", s.handleFeature(true))
		r.Delete("/scenarios/{id}/feature", s.handleFeature(false))
		r.Get("/openapi.json", s.handleOpenAPI)
		r.Get("/algorithms", s.handleAlgorithms)
		r.Get("/vocabulary", s.handleVocabulary)
		r.Get("/scenarios", s.handleListScenarios)
		r.Post("/scenarios", s.handleCreateScenario)
		r.Post("/scenarios/validate", s.handleValidateScenario)
		r.Post("/import/ns3", s.handleImportNS3) // import_ns3.go
		r.Get("/scenarios/{id}", s.handleGetScenario)
		r.Delete("/scenarios/{id}", s.handleDeleteScenario)
		r.Get("/scenarios/{id}/class", s.handleClassScenario) // classview.go
		r.Get("/scenarios/{id}/exercise", s.handleGetExercise)
		r.Put("/scenarios/{id}/exercise", s.handlePutExercise)
		r.Delete("/scenarios/{id}/exercise", s.handleDeleteExercise)
		r.Post("/runs", s.handleCreateRun)
		r.Get("/runs", s.handleListRuns)
		r.Get("/runs/{id}", s.handleGetRun)
		r.Delete("/runs/{id}", s.handleDeleteRun)
		r.Post("/runs/{id}/cancel", s.handleControl((*runs.Manager).Cancel, true))
		r.Post("/runs/{id}/pause", s.handleControl((*runs.Manager).Pause, false))
		r.Post("/runs/{id}/resume", s.handleControl((*runs.Manager).Resume, false))
		r.Post("/runs/{id}/speed", s.handleSpeed)
		r.Post("/runs/{id}/params", s.handleParams)
		r.Post("/runs/{id}/pin", s.handlePin(true))
		r.Post("/runs/{id}/unpin", s.handlePin(false))
		r.Get("/runs/{id}/flows.csv", s.handleFlowsCSV)
		r.Get("/runs/{id}/series.csv", s.handleSeriesCSV)
		r.Get("/runs/{id}/series", s.handleSeriesJSON)
		r.Get("/runs/{id}/summary.json", s.handleSummary)
		r.Get("/runs/{id}/export.json", s.handleExport)
		r.Get("/runs/{id}/ns3.zip", s.handleNS3Zip)
		r.Get("/compare", s.handleCompare)
		r.Get("/sweeps", s.handleListSweeps)
		r.Post("/sweeps", s.handleCreateSweep)
		r.Get("/sweeps/{id}", s.handleGetSweep)
		r.Delete("/sweeps/{id}", s.handleDeleteSweep)
		r.Post("/sweeps/{id}/cancel", s.handleCancelSweep)
		r.Get("/sweeps/{id}/sweep.csv", s.handleSweepCSV)
		r.Get("/sweeps/{id}/sweep.json", s.handleSweepJSON)
		r.Get("/reproductions", s.handleListReproductions)
		r.Post("/reproductions", s.handleCreateReproduction)
		r.Get("/reproductions/{id}", s.handleGetReproduction)
		r.Get("/reproductions/{id}/figures/{name}", s.handleReproductionFigure)
		r.Post("/stability/qcn", s.handleStabilityQCN)
		r.Post("/stability/margins", s.handleStabilityMargins)
		r.Post("/stability/sweep", s.handleStabilitySweep)
		r.Post("/stability/dcqcn", s.handleStabilityDCQCN)
		r.Post("/stability/ap", s.handleStabilityAP)
		r.Post("/stability/rcp", s.handleStabilityRCP)
		r.Get("/policies", s.handleListPolicies)
		r.Post("/policies", s.handleUploadPolicy)
		r.Get("/policies/{id}", s.handleGetPolicy)
		r.Delete("/policies/{id}", s.handleDeletePolicy)
		r.Get("/policies/{id}/policy.safetensors", s.handlePolicyFile)
		r.Post("/train", s.handleCreateTraining)
		r.Get("/train", s.handleListTraining)
		r.Get("/train/{id}", s.handleGetTraining)
		r.Post("/train/{id}/cancel", s.handleCancelTraining)
		r.Post("/train/{id}/resume", s.handleResumeTraining)
		r.Get("/train/{id}/curve.csv", s.handleTrainingCurve)
	})
	r.Get("/ws/runs/{id}", s.handleWS)
	r.Get("/ws/train/{id}", s.handleTrainWS)
	return r
}

// recoverer turns a panic in a handler into a logged 500: a bug, never a
// crashed server.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets the WebSocket upgrade take the connection over.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the connection cannot be taken over")
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		level := slog.LevelDebug
		if sw.status >= 500 {
			level = slog.LevelError
		} else if sw.status >= 400 {
			level = slog.LevelInfo
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "ms", float64(time.Since(t0).Microseconds())/1e3)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	running, queued := s.mgr.Counts()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "running": running, "queued": queued,
		"concurrency": s.mgr.Config().Concurrency, "codeVersion": s.cfg.CodeVersion})
}

func (s *Server) handleAlgorithms(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, cc.Algorithms())
}

func (s *Server) handleVocabulary(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, report.Vocab())
}
