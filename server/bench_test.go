package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// fatTreeScenario is the 16-host fat-tree (WebSearch 30%) for 20 ms.
func fatTreeScenario(tb testing.TB, s *testServer) map[string]any {
	tb.Helper()
	var lib scenarioJSON
	s.must(http.StatusOK, "GET", "/api/scenarios/fattree16-websearch30", nil, &lib)
	var sc map[string]any
	if err := json.Unmarshal(lib.Scenario, &sc); err != nil {
		tb.Fatal(err)
	}
	sc["duration"] = "20ms"
	return sc
}

// fatTreeRun stores one run of the 16-host fat-tree (WebSearch 30%, HPCC)
// for 20 ms and returns its id.
func fatTreeRun(tb testing.TB, s *testServer) string {
	tb.Helper()
	id := s.startRun(map[string]any{"scenario": fatTreeScenario(tb, s), "cc": map[string]any{"algorithm": "hpcc"}})
	s.waitStatus(id, 2*time.Minute, "done")
	return id
}

// BenchmarkChartAPI is the latency of a run's full chart data (every series
// at level 1, one GET) for the 20 ms fat-tree run.
func BenchmarkChartAPI(b *testing.B) {
	s := newTestServer(b, Config{})
	id := fatTreeRun(b, s)
	client := s.ts.Client()
	var bytes, points int
	for b.Loop() {
		resp, err := client.Get(s.ts.URL + "/api/runs/" + id + "/series?level=1")
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
		bytes = len(data)
		if points == 0 {
			var chart struct{ Series []chartSeries }
			json.Unmarshal(data, &chart)
			for _, sr := range chart.Series {
				points += len(sr.T)
			}
		}
	}
	b.ReportMetric(float64(points), "points")
	b.ReportMetric(float64(bytes)/1e6, "MB")
}

// BenchmarkWebSocketFanout: 50 viewers each receive the whole decimated
// history of the 20 ms fat-tree run over real WebSockets. With the frame
// pacing lowered to 1 ms this measures the server's fan-out capacity:
// frames and points delivered per second across all viewers.
func BenchmarkWebSocketFanout(b *testing.B) {
	const viewers = 50
	s := newTestServer(b, Config{FrameEvery: time.Millisecond})
	id := fatTreeRun(b, s)
	url := "ws" + strings.TrimPrefix(s.ts.URL, "http") + "/ws/runs/" + id
	var frames, points, bytes int64
	start := time.Now()
	for b.Loop() {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range viewers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, _, err := websocket.DefaultDialer.Dial(url, nil)
				if err != nil {
					b.Error(err)
					return
				}
				defer conn.Close()
				var f, p, n int64
				for {
					_, data, err := conn.ReadMessage()
					if err != nil {
						b.Error(err)
						return
					}
					n += int64(len(data))
					var m struct {
						Type   string
						Points int
					}
					json.Unmarshal(data, &m)
					if m.Type == "samples" {
						f++
						p += int64(m.Points)
					}
					if m.Type == "done" || m.Type == "failed" {
						break
					}
				}
				mu.Lock()
				frames += f
				points += p
				bytes += n
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(frames)/sec, "frames/s")
	b.ReportMetric(float64(points)/sec, "points/s")
	b.ReportMetric(float64(bytes)/1e6/sec, "MB/s")
}
