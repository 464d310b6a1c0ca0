package server

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"cclab/server/training"
)

// The WebSocket stream of a training job (GET /ws/train/{id}). Server to
// viewer, JSON text messages, each with a "type":
//
//	hello   {job}: the job as GET /api/train/{id} has it, without its
//	        curve; sent first
//	round   one point of the learning curve per training round (as the
//	        curve's points): the rounds so far first, then each new one
//	status  {status, episode, episodes, stage, error}: when it changes
//	done    {status, error, policy, interrupted, resumable}: the job
//	        ended; the server then closes the stream
//
// A resumed job that continues from a checkpoint older than its last round
// sends the rounds since the checkpoint again (the same episodes, the same
// values). Viewers send nothing; frames go out at most every
// Config.FrameEvery, and a viewer that stops reading is dropped after
// Config.WriteWait.

type trainStatusMsg struct {
	Type     string `json:"type"`
	Status   string `json:"status"`
	Episode  int    `json:"episode"`
	Episodes int    `json:"episodes"`
	Stage    int    `json:"stage"`
	Error    string `json:"error,omitempty"`
}

type trainDoneMsg struct {
	Type        string `json:"type"`
	Status      string `json:"status"`
	Error       string `json:"error,omitempty"`
	Policy      string `json:"policy,omitempty"`
	Interrupted bool   `json:"interrupted"`
	Resumable   bool   `json:"resumable"`
}

func (s *Server) handleTrainWS(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	j, changed, err := s.train.Watch(r.Context(), id)
	if err != nil {
		s.writeError(w, r, trainError(err))
		return
	}
	if max := s.cfg.MaxViewers; max > 0 && s.viewers.Load() >= int64(max) {
		s.writeError(w, r, limitError(http.StatusServiceUnavailable, "max-viewers", "",
			"%d viewers are connected, this server's limit (max-viewers); try again later", max))
		return
	}
	if owner := who(r).owner; !who(r).instructor {
		if err := s.limits.openViewer(owner); err != nil {
			s.writeError(w, r, err)
			return
		}
		defer s.limits.closeViewer(owner)
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	s.viewers.Add(1)
	defer s.viewers.Add(-1)
	defer conn.Close()
	s.streamTraining(r, conn, id, j, changed)
}

// streamTraining is the one writer of conn; a reader goroutine answers
// pings and notices the viewer leaving.
func (s *Server) streamTraining(r *http.Request, conn *websocket.Conn, id string, j training.Job, changed <-chan struct{}) {
	log := s.log.With("train", id, "viewer", conn.RemoteAddr().String())
	pongWait := 3 * s.cfg.PingEvery
	closed := make(chan struct{})
	conn.SetReadLimit(4096)
	conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	go func() {
		defer close(closed)
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
			conn.SetReadDeadline(time.Now().Add(pongWait))
		}
	}()
	write := func(msg any) bool {
		conn.SetWriteDeadline(time.Now().Add(s.cfg.WriteWait))
		if err := conn.WriteJSON(msg); err != nil {
			log.Debug("viewer dropped", "err", err)
			return false
		}
		return true
	}
	hello := s.trainViewFor(r, j)
	hello.Curve = nil
	if !write(map[string]any{"type": "hello", "job": hello}) {
		return
	}
	ping := time.NewTicker(s.cfg.PingEvery)
	defer ping.Stop()
	sent := 0
	var last trainStatusMsg
	for {
		// after a resume from an older checkpoint the curve is shorter:
		// the rounds from there on come again
		sent = min(sent, len(j.Curve))
		for _, p := range j.Curve[sent:] {
			cp := curvePointOf(p)
			cp.Type = "round"
			if !write(cp) {
				return
			}
		}
		sent = len(j.Curve)
		st := trainStatusMsg{Type: "status", Status: j.Status, Episode: j.Episode, Episodes: j.Config.Episodes, Stage: j.Stage, Error: j.Error}
		if st != last {
			if !write(st) {
				return
			}
			last = st
		}
		if changed == nil {
			write(trainDoneMsg{Type: "done", Status: j.Status, Error: j.Error, Policy: j.PolicyID, Interrupted: j.Interrupted, Resumable: j.Resumable})
			conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "the job has ended"),
				time.Now().Add(s.cfg.WriteWait))
			return
		}
		// wait for a change, answering pings; then at most one frame per
		// FrameEvery
		for waiting := true; waiting; {
			select {
			case <-closed:
				return
			case <-ping.C:
				if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.cfg.WriteWait)); err != nil {
					return
				}
			case <-changed:
				waiting = false
			}
		}
		pause := time.NewTimer(s.cfg.FrameEvery)
		select {
		case <-closed:
			pause.Stop()
			return
		case <-pause.C:
		}
		var err error
		if j, changed, err = s.train.Watch(context.Background(), id); err != nil {
			write(map[string]string{"type": "error", "error": err.Error()})
			return
		}
	}
}
