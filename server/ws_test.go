package server

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsClient reads a run's stream.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
}

func (s *testServer) dial(id string) *wsClient {
	s.t.Helper()
	url := "ws" + strings.TrimPrefix(s.ts.URL, "http") + "/ws/runs/" + id
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		s.t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	s.t.Cleanup(func() { conn.Close() })
	return &wsClient{t: s.t, conn: conn}
}

// message is any stream message.
type message struct {
	Type     string          `json:"type"`
	Run      runJSON         `json:"run"`
	Keys     []seriesKey     `json:"keys"`
	Series   []seriesData    `json:"series"`
	Points   int             `json:"points"`
	Status   string          `json:"status"`
	Progress float64         `json:"progress"`
	SimNs    float64         `json:"simNs"`
	AtNs     float64         `json:"atNs"`
	Params   json.RawMessage `json:"params"`
	Summary  json.RawMessage `json:"summary"`
	Error    string          `json:"error"`
}

func (c *wsClient) read(timeout time.Duration) message {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(timeout))
	var m message
	if err := c.conn.ReadJSON(&m); err != nil {
		c.t.Fatalf("reading the stream: %v", err)
	}
	return m
}

// stream collects what a viewer has seen.
type stream struct {
	keys    map[int]seriesKey
	pts     map[int][]point
	frames  int
	counts  []int // total points after each samples frame
	total   int
	changes []message
	final   *message
	times   []time.Time
}

func newStream() *stream { return &stream{keys: map[int]seriesKey{}, pts: map[int][]point{}} }

func (st *stream) add(m message) {
	switch m.Type {
	case "samples":
		st.frames++
		st.times = append(st.times, time.Now())
		for _, k := range m.Keys {
			st.keys[k.Index] = k
		}
		for _, sd := range m.Series {
			for j := range sd.T {
				st.pts[sd.I] = append(st.pts[sd.I], point{int64(sd.T[j] * 1e3), sd.V[j]})
			}
			st.total += len(sd.T)
		}
		st.counts = append(st.counts, st.total)
	case "parameter-changed":
		st.changes = append(st.changes, m)
	case "done", "failed":
		mm := m
		st.final = &mm
	}
}

// series finds the points of metric/entity.
func (st *stream) series(metric, entity string) []point {
	for i, k := range st.keys {
		if k.Metric == metric && k.Entity == entity {
			return st.pts[i]
		}
	}
	return nil
}

func TestWebSocketLiveRun(t *testing.T) {
	s := newTestServer(t, Config{})
	// one long flow without congestion control: its window is windowBDPs ×
	// max BDP, so a live change of windowBDPs shows in cwnd_bytes at once
	sc := map[string]any{
		"name": "ws-window",
		"topology": map[string]any{"kind": "dumbbell", "senders": 1,
			"hostLink": map[string]any{"rate": "10Gbps", "delay": "1us"}},
		"cc":       map[string]any{"algorithm": "none"},
		"duration": "3ms",
		"workload": []any{map[string]any{"kind": "flows", "flows": []any{
			map[string]any{"src": "h0", "dst": "r0", "size": "100MB", "start": "0s"}}}},
	}
	// 3 ms of simulated time at 2 ms per wall second: about 1.5 s
	id := s.startRun(map[string]any{"scenario": sc, "speed": 2000})
	c := s.dial(id)
	hello := c.read(5 * time.Second)
	if hello.Type != "hello" || hello.Run.ID != id || hello.Run.BucketNs != 10000 {
		t.Fatalf("first message %+v", hello)
	}
	st := newStream()
	changed := false
	var changeAt float64
	for st.final == nil {
		m := c.read(10 * time.Second)
		st.add(m)
		if m.Type == "progress" && !changed && m.SimNs > 1e6 {
			var ch changeMsg
			s.must(http.StatusOK, "POST", "/api/runs/"+id+"/params", map[string]any{"windowBDPs": 0.5}, &ch)
			changed, changeAt = true, ch.AtNs
		}
	}
	if st.final.Type != "done" || st.final.Status != "done" || len(st.final.Summary) == 0 {
		t.Fatalf("final message %+v", st.final)
	}
	// frames came in several batches whose point counts grew
	if st.frames < 5 {
		t.Fatalf("only %d samples frames in a 1.5 s run", st.frames)
	}
	for i := 1; i < len(st.counts); i++ {
		if st.counts[i] <= st.counts[i-1] {
			t.Fatalf("frame %d did not add points: %v", i, st.counts)
		}
	}
	// no faster than 20 frames/s: the server sends them at least 50 ms
	// apart; what arrives can bunch up by scheduling jitter, so check the
	// rate over the whole stream and allow pairs down to 25 ms
	span := st.times[len(st.times)-1].Sub(st.times[0])
	if max := int(span/(50*time.Millisecond)) + 1; st.frames > max {
		t.Fatalf("%d samples frames in %v: more than 20 per second", st.frames, span)
	}
	for i := 1; i < len(st.times); i++ {
		if d := st.times[i].Sub(st.times[i-1]); d < 25*time.Millisecond {
			t.Fatalf("frames %d and %d only %v apart", i-1, i, d)
		}
	}
	// the change was acknowledged on the stream at the time the API answered
	if !changed || len(st.changes) != 1 || st.changes[0].AtNs != changeAt {
		t.Fatalf("changes seen %+v, made at %g", st.changes, changeAt)
	}
	// and it is in the series: the window halves from the change on
	cwnd := st.series("cwnd_bytes", "0")
	if len(cwnd) < 250 {
		t.Fatalf("%d cwnd points, want ~300 (3 ms at 10 µs)", len(cwnd))
	}
	var before, after float64
	for _, p := range cwnd {
		switch {
		case float64(p.T)/1e3 < changeAt-20e3:
			before = p.V
		case float64(p.T)/1e3 > changeAt+20e3:
			after = p.V
		}
	}
	if before == 0 || after != before/2 {
		t.Fatalf("cwnd %g before the change, %g after; want half", before, after)
	}
	// everything streamed is what the API stores for the chart
	var chart struct{ Series []chartSeries }
	s.must(http.StatusOK, "GET", "/api/runs/"+id+"/series?level=1", nil, &chart)
	stored := 0
	for _, sr := range chart.Series {
		stored += len(sr.T)
		got := st.pts[sr.I]
		if len(got) != len(sr.T) {
			t.Fatalf("series %s/%s: %d points streamed, %d stored", sr.Metric, sr.Entity, len(got), len(sr.T))
		}
		for j := range got {
			if got[j].V != sr.V[j] {
				t.Fatalf("series %s/%s point %d: streamed %g, stored %g", sr.Metric, sr.Entity, j, got[j].V, sr.V[j])
			}
		}
	}
	if stored != st.total {
		t.Fatalf("streamed %d points, stored %d", st.total, stored)
	}

	// a late viewer of the finished run gets the whole history, then done;
	// and can replay it on the same socket
	late := s.dial(id)
	if m := late.read(5 * time.Second); m.Type != "hello" || m.Run.Status != "done" {
		t.Fatalf("late hello %+v", m)
	}
	lst := newStream()
	for lst.final == nil {
		lst.add(late.read(5 * time.Second))
	}
	if lst.total != st.total || len(lst.changes) != 1 {
		t.Fatalf("late viewer: %d points, %d changes; live viewer %d", lst.total, len(lst.changes), st.total)
	}
	late.conn.WriteJSON(map[string]any{"type": "replay", "speed": 10000})
	if m := late.read(5 * time.Second); m.Type != "replay" {
		t.Fatalf("after a replay request: %+v", m)
	}
	rst := newStream()
	t0 := time.Now()
	for rst.final == nil {
		rst.add(late.read(5 * time.Second))
	}
	// 3 ms at 10 ms per wall second takes about 0.3 s
	if rst.total != st.total || time.Since(t0) < 200*time.Millisecond || rst.frames < 3 {
		t.Fatalf("replay: %d points in %d frames over %v", rst.total, rst.frames, time.Since(t0))
	}
	late.conn.WriteJSON(map[string]any{"type": "nonsense"})
	if m := late.read(5 * time.Second); m.Type != "error" {
		t.Fatalf("after a bad request: %+v", m)
	}
	c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))

	// unknown run: a 404 before any upgrade
	code, data := s.do("GET", "/ws/runs/nope", nil)
	checkError(t, code, data, 404, "id", "")
}

func TestWebSocketManyViewersOneStalled(t *testing.T) {
	s := newTestServer(t, Config{WriteWait: 5 * time.Second})
	// the 16-host fat-tree for 20 ms: some 200 k decimated points, several
	// MB of frames per viewer
	id := s.startRun(map[string]any{"scenario": fatTreeScenario(t, s), "cc": map[string]any{"algorithm": "hpcc"}})
	// a viewer that never reads, with a tiny receive buffer so that the
	// server's writes to it block
	stalledDialer := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(1024)
		}
		return c, err
	}}
	url := "ws" + strings.TrimPrefix(s.ts.URL, "http") + "/ws/runs/" + id
	stalled, _, err := stalledDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	const viewers = 49
	var wg sync.WaitGroup
	results := make([]*stream, viewers)
	errs := make(chan error, viewers)
	for i := range viewers {
		c := s.dial(id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newStream()
			for st.final == nil {
				c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
				var m message
				if err := c.conn.ReadJSON(&m); err != nil {
					errs <- err
					return
				}
				st.add(m)
			}
			results[i] = st
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a reading viewer failed: %v", err)
	}
	var chart struct{ Series []chartSeries }
	s.must(http.StatusOK, "GET", "/api/runs/"+id+"/series?level=1", nil, &chart)
	stored := 0
	for _, sr := range chart.Series {
		stored += len(sr.T)
	}
	for i, st := range results {
		if st.total != stored {
			t.Fatalf("viewer %d: %d points in %d frames, stored %d", i, st.total, st.frames, stored)
		}
	}
	t.Logf("%d viewers each received %d points; frames per viewer: %d", viewers, stored, results[0].frames)
	s.waitStatus(id, time.Second, "done")
}
