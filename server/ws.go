package server

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"cclab/server/runs"
	"cclab/store"
)

// The WebSocket stream of a run (GET /ws/runs/{id}). Server to viewer, JSON
// text messages, each with a "type":
//
//	hello              the run's metadata (as GET /api/runs/{id}), the
//	                   decimation bucket and level; sent first
//	samples            {keys: series first seen, series: [{i, t (ns), v}],
//	                   points}: decimated (level 1) points not sent before;
//	                   a late joiner first gets the whole history this way
//	progress           status, progress 0..1, simNs, events, eventsPerSecond,
//	                   flowsFinished, flowsTotal, wallSeconds, speed
//	parameter-changed  {seq, atNs, params}: a live change took effect
//	done | failed      the run ended: status, error, summary
//	replay             {speed}: a replay of the stored run starts (the
//	                   messages above follow again, from the beginning)
//	error              {error}: a viewer message was not understood
//
// Viewer to server: {"type": "replay", "speed": "max" | µs per wall s}
// replays the stream (a finished run's history, paced at that speed).
// Frames go out at most every Config.FrameEvery (20 per second); a viewer
// that falls behind gets everything new coalesced into its next frame, and
// one that stops reading is dropped after Config.WriteWait without the
// simulation or other viewers waiting for it.

type helloMsg struct {
	Type     string  `json:"type"`
	Run      runJSON `json:"run"`
	BucketNs float64 `json:"bucketNs"`
	Level    int     `json:"level"`
}

type replayMsg struct {
	Type  string `json:"type"`
	Speed any    `json:"speed"`
}

type viewerMsg struct {
	Type  string          `json:"type"`
	Speed json.RawMessage `json:"speed"`
}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if max := s.cfg.MaxViewers; max > 0 && s.viewers.Load() >= int64(max) {
		s.writeError(w, r, limitError(http.StatusServiceUnavailable, "max-viewers", "",
			"%d viewers are connected, this server's limit (max-viewers); try again later", max))
		return
	}
	owner := who(r).owner
	if !who(r).instructor {
		if err := s.limits.openViewer(owner); err != nil {
			s.writeError(w, r, err)
			return
		}
		defer s.limits.closeViewer(owner)
	}
	h, err := s.mgr.Watch(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer s.mgr.Unwatch(run.ID, h)
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	s.viewers.Add(1)
	defer s.viewers.Add(-1)
	defer conn.Close()
	s.stream(r, conn, h, run)
}

// stream is the one writer of conn; a reader goroutine answers pings and
// passes replay requests.
func (s *Server) stream(r *http.Request, conn *websocket.Conn, h *runs.Hub, run *store.Run) {
	log := s.log.With("run", run.ID, "viewer", conn.RemoteAddr().String())
	pongWait := 3 * s.cfg.PingEvery
	closed := make(chan struct{})
	stopped := make(chan struct{}) // the writer returned
	defer close(stopped)
	replays := make(chan viewerMsg)
	conn.SetReadLimit(4096)
	conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	go func() {
		defer close(closed)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			conn.SetReadDeadline(time.Now().Add(pongWait))
			var m viewerMsg
			if json.Unmarshal(data, &m) != nil || m.Type != "replay" {
				m = viewerMsg{Type: "error"}
			}
			select {
			case replays <- m:
			case <-stopped:
				return
			}
		}
	}()

	v := h.Join()
	defer h.Leave(v)
	write := func(msg any) bool {
		conn.SetWriteDeadline(time.Now().Add(s.cfg.WriteWait))
		if err := conn.WriteJSON(msg); err != nil {
			log.Debug("viewer dropped", "err", err)
			return false
		}
		return true
	}
	hello := helloMsg{Type: "hello", Run: s.runView(r, run), BucketNs: float64(run.BucketPS) / 1e3, Level: 1}
	if !write(hello) {
		return
	}
	ping := time.NewTicker(s.cfg.PingEvery)
	defer ping.Stop()
	cur := &runs.Cursor{}
	tMax := runs.MaxTime
	var replayStart time.Time
	var replaySpeed float64 // simulated µs per wall second; 0: live, or replay at once
	var last time.Time
	var buf []byte
	for {
		select {
		case <-closed:
			return
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.cfg.WriteWait)); err != nil {
				return
			}
			continue
		case m := <-replays:
			if m.Type != "replay" {
				if !write(map[string]string{"type": "error", "error": `want {"type": "replay", "speed": "max" | simulated µs per wall second}`}) {
					return
				}
				continue
			}
			speed, err := parseSpeed(m.Speed)
			if err != nil {
				if !write(map[string]string{"type": "error", "error": err.Error()}) {
					return
				}
				continue
			}
			if !write(replayMsg{Type: "replay", Speed: runs.SpeedJSON(speed)}) {
				return
			}
			cur, replaySpeed, replayStart, tMax = &runs.Cursor{}, speed, time.Now(), runs.MaxTime
			if speed > 0 {
				tMax = 0
			}
		case <-v.C():
		}
		// at most one frame per FrameEvery
		if wait := s.cfg.FrameEvery - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-closed:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if replaySpeed > 0 && tMax != runs.MaxTime {
			tMax = int64(replaySpeed * 1e6 * time.Since(replayStart).Seconds())
			if endPS := int64(h.Progress().SimNs*1e3) + run.BucketPS; tMax >= endPS {
				tMax = runs.MaxTime
			}
		}
		f := h.Next(cur, tMax, s.cfg.FramePoints)
		last = time.Now()
		if f.Samples != nil {
			buf = appendSamples(buf[:0], f.Samples)
			conn.SetWriteDeadline(time.Now().Add(s.cfg.WriteWait))
			if err := conn.WriteMessage(websocket.TextMessage, buf); err != nil {
				log.Debug("viewer dropped", "err", err)
				return
			}
		}
		for _, c := range f.Changes {
			if !write(c) {
				return
			}
		}
		if f.Progress != nil && !write(f.Progress) {
			return
		}
		if f.Final != nil && !write(f.Final) {
			return
		}
		if f.More || (replaySpeed > 0 && tMax != runs.MaxTime) {
			v.Wake()
		}
	}
}
