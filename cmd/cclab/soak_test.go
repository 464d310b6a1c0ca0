package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The class soak test (issue 18): a real `cclab serve`, built once, with
// its default limits, under 40 students and one abusive client for a
// while. Without -soak (or CCLAB_SOAK=1) it is the short CI version, about
// a minute in all; with it, 10 minutes of load:
//
//	go test ./cmd/cclab -run Soak -count=1 -v                    # CI version
//	go test ./cmd/cclab -run Soak -count=1 -v -soak -timeout 20m  # 10 minutes
var (
	soakFlag = flag.Bool("soak", false, "TestSoak: 10 minutes of class load instead of the CI version's 45 s (also CCLAB_SOAK=1)")
	soakLoad = flag.Duration("soak-duration", 0, "TestSoak: the load phase's length (default 45s, or 10m with -soak)")
	soakOut  = flag.String("soak-out", "", "TestSoak: also write the report to this file (it is always written to the test's temp dir)")
)

const (
	soakStudents = 40
	soakSeed     = 18 // the schedule's seed: every student's choices are the same from run to run
)

// soakChoice is one kind of small run a student starts: a library
// scenario, perhaps under another algorithm, and the speed (simulated µs
// per wall second) that makes it live for about 3 s when paced.
type soakChoice struct {
	scenario string
	algo     string // "" keeps the scenario's
	speed    float64
}

var soakChoices = []soakChoice{
	{"incast-8to1", "", 250}, // 0.7 ms simulated, a few ms of CPU
	{"incast-8to1", "dcqcn", 350},
	{"incast-8to1", "hpcc", 250},
	{"incast-8to1", "timely", 250},
	{"dumbbell-4to1-none", "", 11000},  // 33 ms simulated at 1 Gbps, 10 ms of CPU
	{"fairness-2flows-hpcc", "", 7000}, // 20 ms simulated, about 0.5 s of CPU
	{"fairness-2flows-hpcc", "timely", 7000},
}

// soakStats is what the clients measure.
type soakStats struct {
	mu         sync.Mutex
	lat        map[string][]time.Duration // students' calls by route group
	fiveXX     []string                   // every 5xx, anyone's
	unexpected []string                   // students' answers that no honest client should get
	netErrs    []string                   // transport errors
}

func (s *soakStats) addLat(group string, d time.Duration) {
	s.mu.Lock()
	s.lat[group] = append(s.lat[group], d)
	s.mu.Unlock()
}

func (s *soakStats) note(list *[]string, format string, args ...any) {
	s.mu.Lock()
	*list = append(*list, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// soakClient is one token's HTTP client.
type soakClient struct {
	base  string
	token string
	hc    *http.Client
	st    *soakStats
}

// do sends one request (JSON body when body is not nil) and measures it
// under group ("" measures nothing). A transport error is status 0.
func (c *soakClient) do(group, method, path string, hdr http.Header, body any) (int, http.Header, []byte) {
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("X-Cclab-Token", c.token)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		c.st.note(&c.st.netErrs, "%s %s: %v", method, path, err)
		return 0, nil, nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		c.st.note(&c.st.netErrs, "%s %s: reading the body: %v", method, path, err)
	}
	if group != "" {
		c.st.addLat(group, time.Since(start))
	}
	if resp.StatusCode >= 500 {
		c.st.note(&c.st.fiveXX, "%s %s: %d %.200s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, resp.Header, data
}

// token gets an owner token (POST /api/token).
func (c *soakClient) getToken(t *testing.T) {
	code, _, data := c.do("token", "POST", "/api/token", nil, map[string]any{})
	var tok struct{ Token string }
	if code != 201 || json.Unmarshal(data, &tok) != nil || tok.Token == "" {
		t.Fatalf("POST /api/token: %d %s", code, data)
	}
	c.token = tok.Token
}

// soakParam is a live parameter a student may change.
type soakParam struct {
	Name     string
	Kind     string
	Default  float64
	Min, Max float64
}

// soakStudent is one student's record.
type soakStudent struct {
	soakClient
	i       int
	rng     *rand.Rand
	params  map[string][]soakParam // live numeric parameters by algorithm
	runs    []string               // created, in order
	ended   int                    // runs whose stream ended with done
	frames  int                    // WebSocket frames received
	streams int                    // WebSocket streams watched to their end
	refused int                    // 429s (an honest student waits Retry-After)
	changes int                    // live changes accepted
	tooLate int                    // live changes answered 409 (the run had just ended)
}

func (s *soakStudent) fail(format string, args ...any) {
	s.st.note(&s.st.unexpected, "student %d: "+format, append([]any{s.i}, args...)...)
}

// loop is a student's session until deadline: start a run, watch it, maybe
// change a parameter while it is live, read its results, compare it with
// the previous one, think; and again.
func (s *soakStudent) loop(deadline time.Time) {
	var prev string
	time.Sleep(time.Duration(s.rng.Float64() * float64(3*time.Second))) // a class does not click at one instant
	for time.Now().Before(deadline) {
		// every choice of this round is drawn first, so the schedule does
		// not depend on what the server answers
		ch := soakChoices[s.rng.IntN(len(soakChoices))]
		paced := s.rng.Float64() < 0.3
		change := paced && s.rng.Float64() < 0.6
		pick, scale := s.rng.IntN(1000), 0.7+0.6*s.rng.Float64()
		seed := 1 + s.rng.IntN(1000)
		think := 1500*time.Millisecond + time.Duration(s.rng.Float64()*float64(4500*time.Millisecond))

		body := map[string]any{"scenarioId": ch.scenario, "seed": seed}
		if ch.algo != "" {
			body["cc"] = map[string]any{"algorithm": ch.algo}
		}
		if paced {
			body["speed"] = ch.speed
		}
		code, hdr, data := s.do("create", "POST", "/api/runs", nil, body)
		switch code {
		case 201:
		case 429: // an honest client waits as told
			s.refused++
			wait, _ := strconv.Atoi(hdr.Get("Retry-After"))
			time.Sleep(min(time.Duration(max(wait, 1))*time.Second, time.Until(deadline)+time.Millisecond))
			continue
		default:
			s.fail("POST /api/runs %v: %d %.300s", body, code, data)
			time.Sleep(time.Second)
			continue
		}
		var created struct{ ID string }
		if json.Unmarshal(data, &created) != nil || created.ID == "" {
			s.fail("POST /api/runs: 201 without an id: %.300s", data)
			continue
		}
		id := created.ID
		s.runs = append(s.runs, id)
		algo := ch.algo
		if algo == "" {
			algo = map[string]string{"incast-8to1": "none", "dumbbell-4to1-none": "none", "fairness-2flows-hpcc": "hpcc"}[ch.scenario]
		}
		var p *soakParam
		if ps := s.params[algo]; change && len(ps) > 0 {
			p = &ps[pick%len(ps)]
		}
		s.watch(id, p, scale, time.Now())

		// the results, as the run page and a notebook read them
		if code, _, data := s.do("read", "GET", "/api/runs/"+id, nil, nil); code != 200 {
			s.fail("GET /api/runs/%s: %d %.300s", id, code, data)
		}
		for _, f := range []string{"flows.csv", "summary.json"} {
			if code, _, data := s.do("read", "GET", "/api/runs/"+id+"/"+f, nil, nil); code != 200 {
				s.fail("GET /api/runs/%s/%s: %d %.300s", id, f, code, data)
			}
		}
		if prev != "" {
			if code, _, data := s.do("compare", "GET", "/api/compare?runs="+prev+","+id, nil, nil); code != 200 {
				s.fail("GET /api/compare?runs=%s,%s: %d %.300s", prev, id, code, data)
			}
		}
		prev = id
		time.Sleep(min(think, time.Until(deadline)+time.Millisecond))
	}
}

// watch follows a run's WebSocket stream to its final message; with p it
// changes that parameter once, when the run is first seen running.
func (s *soakStudent) watch(id string, p *soakParam, scale float64, created time.Time) {
	u := "ws" + strings.TrimPrefix(s.base, "http") + "/ws/runs/" + id
	d := websocket.Dialer{HandshakeTimeout: 15 * time.Second}
	start := time.Now()
	conn, resp, err := d.Dial(u, http.Header{"X-Cclab-Token": {s.token}})
	if err != nil {
		code := 0
		if resp != nil {
			code = resp.StatusCode
			if code >= 500 {
				s.st.note(&s.st.fiveXX, "GET /ws/runs/%s: %d", id, code)
			}
		}
		s.fail("dialling /ws/runs/%s: %d %v", id, code, err)
		return
	}
	s.st.addLat("ws-dial", time.Since(start))
	defer conn.Close()
	first, waiting := true, true
	for {
		// a run may wait behind the whole class's queue before it starts
		conn.SetReadDeadline(time.Now().Add(3 * time.Minute))
		_, data, err := conn.ReadMessage()
		if err != nil {
			s.fail("/ws/runs/%s: the stream broke before the final message: %v", id, err)
			return
		}
		s.frames++
		var m struct {
			Type   string
			Status string
		}
		if err := json.Unmarshal(data, &m); err != nil {
			s.fail("/ws/runs/%s: not JSON: %.100s", id, data)
			return
		}
		if first && m.Type != "hello" {
			s.fail("/ws/runs/%s: first message %q, want hello", id, m.Type)
		}
		first = false
		if waiting && (m.Type == "progress" && m.Status != "queued" || m.Type == "done" || m.Type == "failed") {
			waiting = false
			s.st.addLat("queue-wait", time.Since(created))
		}
		switch m.Type {
		case "progress":
			if p != nil && m.Status == "running" {
				s.change(id, *p, scale)
				p = nil
			}
		case "done", "failed":
			s.streams++
			if m.Type == "done" && m.Status == "done" {
				s.ended++
			} else {
				s.fail("run %s ended %s %s", id, m.Type, m.Status)
			}
			return
		}
	}
}

// change sets a live parameter to its default scaled by 0.7–1.3, in its
// range.
func (s *soakStudent) change(id string, p soakParam, scale float64) {
	v := p.Default * scale
	if v == 0 {
		v = p.Min + 0.01*(p.Max-p.Min)
	}
	v = math.Min(math.Max(v, p.Min), p.Max)
	if p.Kind == "int" {
		v = math.Round(v)
	}
	code, _, data := s.do("params", "POST", "/api/runs/"+id+"/params", nil, map[string]any{p.Name: v})
	switch code {
	case 200:
		s.changes++
	case 409: // it ended meanwhile
		s.tooLate++
	default:
		s.fail("POST /api/runs/%s/params {%s: %g}: %d %.300s", id, p.Name, v, code, data)
	}
}

// soakAbuser is one token hammering POST /api/runs, sometimes with a new
// X-Cclab-Client label (a label, never a new quota).
type soakAbuser struct {
	soakClient
	requests, accepted int
	byLimit            map[string]int
	badRefusals        []string // 429 without Retry-After or a known limit
	other              map[int]int
	ids                []string
}

func (a *soakAbuser) loop(deadline time.Time) {
	for n := 0; time.Now().Before(deadline); n++ {
		var hdr http.Header
		if n%3 == 2 {
			hdr = http.Header{"X-Cclab-Client": {fmt.Sprintf("abuser-%d", n)}}
		}
		a.requests++
		code, h, data := a.do("abuser", "POST", "/api/runs", hdr, map[string]any{"scenarioId": "incast-8to1", "seed": 1 + n%1000})
		switch code {
		case 201:
			a.accepted++
			var r struct{ ID string }
			json.Unmarshal(data, &r)
			a.ids = append(a.ids, r.ID)
		case 429:
			var e struct{ Limit string }
			json.Unmarshal(data, &e)
			ra, err := strconv.Atoi(h.Get("Retry-After"))
			if err != nil || ra < 1 || !slices.Contains([]string{"runs-per-minute", "max-client-runs", "work-per-hour"}, e.Limit) {
				if len(a.badRefusals) < 10 {
					a.badRefusals = append(a.badRefusals, fmt.Sprintf("Retry-After %q, %.200s", h.Get("Retry-After"), data))
				}
			}
			a.byLimit[e.Limit]++
		default:
			a.other[code]++
		}
	}
}

// rssSample is the server's resident memory, and its runs running and
// queued (GET /api/health), at a time since the start.
type rssSample struct {
	at              time.Duration
	kib             int
	running, queued int
}

// procRSS reads VmRSS (KiB) of a process; 0 when it cannot.
func procRSS(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// procCPU is a process's user + system CPU time so far.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after "pid (comm)"
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(d)))) - 1
	return d[max(i, 0)]
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }

// TestSoak is the class soak test: 40 students and one abusive client on a
// real server with the default class limits. The 40 students all come
// from 127.0.0.1, but each has its own owner token and so its own quota.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak test takes a minute (-short)")
	}
	long := *soakFlag || os.Getenv("CCLAB_SOAK") == "1"
	load := 45 * time.Second
	if long {
		load = 10 * time.Minute
	}
	if *soakLoad > 0 {
		load = *soakLoad
	}
	// leave room for building, draining and shutting down within -timeout
	var note string
	if dl, ok := t.Deadline(); ok {
		if room := time.Until(dl) - 2*time.Minute; load > room {
			note = fmt.Sprintf("load shortened from %s to %s to fit go test's -timeout (pass -timeout 20m)", load, room.Round(time.Second))
			load = room
			t.Log(note)
		}
	}

	// build the binary once and start it as a class would
	dir := t.TempDir()
	bin := filepath.Join(dir, "cclab")
	buildStart := time.Now()
	build := exec.Command("go", "build", "-o", bin, "cclab/cmd/cclab")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	buildTime := time.Since(buildStart)
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lab.db"),
		"--instructor-token", "soak-instructor-token", "--log-level", "warn")
	srv.Stderr = logFile
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if srv.ProcessState == nil {
			srv.Process.Kill()
			srv.Wait()
		}
	})
	serverLog := func() string {
		data, _ := os.ReadFile(logPath)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		return string(data)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`serving on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatalf("cclab serve did not say where it serves; log:\n%s", serverLog())
	}
	pid := srv.Process.Pid
	t0 := time.Now()

	// the server's memory, every 5 s until it stops
	var rssMu sync.Mutex
	var rss []rssSample
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			if k := procRSS(pid); k > 0 {
				var h struct{ Running, Queued int }
				if resp, err := http.Get(base + "/api/health"); err == nil {
					json.NewDecoder(resp.Body).Decode(&h)
					resp.Body.Close()
				}
				rssMu.Lock()
				rss = append(rss, rssSample{time.Since(t0), k, h.Running, h.Queued})
				rssMu.Unlock()
			}
			select {
			case <-stopRSS:
				return
			case <-tick.C:
			}
		}
	}()

	st := &soakStats{lat: map[string][]time.Duration{}}
	tr := &http.Transport{MaxIdleConns: 200, MaxIdleConnsPerHost: 200, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	defer tr.CloseIdleConnections()

	// the live parameters of every algorithm, read once as the lab's form does
	var algos []struct {
		Name   string
		Params []struct {
			Name     string
			Kind     string
			Default  any
			Min, Max *float64
			Live     bool
		}
	}
	probe := &soakClient{base: base, hc: hc, st: st}
	code, _, data := probe.do("", "GET", "/api/algorithms", nil, nil)
	if code != 200 || json.Unmarshal(data, &algos) != nil {
		t.Fatalf("GET /api/algorithms: %d %.300s", code, data)
	}
	live := map[string][]soakParam{}
	for _, a := range algos {
		for _, p := range a.Params {
			def, isNum := p.Default.(float64)
			if p.Live && isNum && p.Min != nil && p.Max != nil && p.Kind != "bool" && *p.Max > *p.Min {
				live[a.Name] = append(live[a.Name], soakParam{p.Name, p.Kind, def, *p.Min, *p.Max})
			}
		}
	}

	deadline := time.Now().Add(load)
	loadEnd := deadline.Sub(t0)
	students := make([]*soakStudent, soakStudents)
	for i := range students {
		s := &soakStudent{soakClient: soakClient{base: base, hc: hc, st: st}, i: i,
			rng: rand.New(rand.NewPCG(soakSeed, uint64(i))), params: live}
		s.getToken(t)
		students[i] = s
	}
	ab := &soakAbuser{soakClient: soakClient{base: base, hc: &http.Client{Timeout: time.Minute}, st: st},
		byLimit: map[string]int{}, other: map[int]int{}}
	ab.getToken(t)
	var wg sync.WaitGroup
	for _, s := range students {
		wg.Go(func() { s.loop(deadline) })
	}
	abStart := time.Now()
	abDone := make(chan struct{})
	go func() {
		defer close(abDone)
		ab.loop(deadline)
	}()
	<-abDone
	abElapsed := time.Since(abStart)
	wg.Wait()
	studentsEnd := time.Since(t0)

	// every run a student created must end done or cancelled with its
	// summary (or still exist, live, until the drain gives up): a 404, a
	// failed run or one still live after the drain is lost
	drainBy := time.Now().Add(90 * time.Second)
	type verdict struct{ done, cancelled, lost int }
	var v verdict
	var lost []string
	for _, s := range students {
		for _, id := range s.runs {
			for {
				code, _, data := probe.do("", "GET", "/api/runs/"+id, nil, nil)
				var r struct {
					Status  string
					Summary json.RawMessage
				}
				json.Unmarshal(data, &r)
				hasSummary := len(r.Summary) > 0 && string(r.Summary) != "null"
				finalOK := code == 200 && (r.Status == "done" || r.Status == "cancelled") && hasSummary
				liveNow := code == 200 && (r.Status == "queued" || r.Status == "running" || r.Status == "paused")
				if liveNow && time.Now().Before(drainBy) {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				switch {
				case finalOK && r.Status == "done":
					v.done++
				case finalOK:
					v.cancelled++
				default:
					v.lost++
					lost = append(lost, fmt.Sprintf("student %d run %s: %d %s (summary %v)", s.i, id, code, r.Status, hasSummary))
				}
				break
			}
		}
	}
	// the abuser's accepted runs drain too, before the server stops
	for _, id := range ab.ids {
		for time.Now().Before(drainBy) {
			_, _, data := probe.do("", "GET", "/api/runs/"+id, nil, nil)
			var r struct{ Status string }
			json.Unmarshal(data, &r)
			if r.Status != "queued" && r.Status != "running" && r.Status != "paused" {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	drainEnd := time.Since(t0)
	cpu := procCPU(pid)
	close(stopRSS)
	<-rssDone

	// stop the server as Ctrl-C does; it must stop cleanly
	srv.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(30 * time.Second):
		srv.Process.Kill()
		exitErr = fmt.Errorf("did not stop within 30 s of SIGINT")
		<-exited
	}

	// ---- the report ----
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	mode := "CI version"
	if long {
		mode = "long (-soak)"
	}
	p("cclab class soak (%s): %d students + 1 abusive client, %s of load; students' last runs ended at %s, every run at %s; GOMAXPROCS %d, %d CPUs; build %s",
		mode, soakStudents, load.Round(time.Second), studentsEnd.Round(100*time.Millisecond), drainEnd.Round(100*time.Millisecond),
		runtime.GOMAXPROCS(0), runtime.NumCPU(), buildTime.Round(100*time.Millisecond))
	if note != "" {
		p("NOTE: %s", note)
	}
	p("server: default class limits (8 runs per owner, 20 creations/min burst 10, work 4e8 packets/h, 16 streams per owner, 200 tokens/h per address);")
	p("        all 41 clients come from 127.0.0.1, each with its own owner token (X-Cclab-Token), hence its own quota")
	var created, ended, frames, streams, refused, changes, tooLate int
	per := make([]int, len(students))
	for i, s := range students {
		created += len(s.runs)
		ended += s.ended
		frames += s.frames
		streams += s.streams
		refused += s.refused
		changes += s.changes
		tooLate += s.tooLate
		per[i] = s.ended
	}
	slices.Sort(per)
	p("students: %d runs created, %d done, %d cancelled, %d LOST; runs finished per student min %d / median %d / max %d; %d refused (429)",
		created, v.done, v.cancelled, v.lost, per[0], per[len(per)/2], per[len(per)-1], refused)
	avg := 0.0
	if streams > 0 {
		avg = float64(frames) / float64(streams)
	}
	p("websocket: %d streams watched to the final message, %d frames delivered (%.1f per run)", streams, frames, avg)
	p("live changes: %d accepted, %d too late (409: the run had just ended)", changes, tooLate)
	p("%-10s %7s %9s %9s %9s", "latency", "calls", "p50 ms", "p99 ms", "max ms")
	groups := []string{"token", "create", "read", "compare", "params", "ws-dial"}
	p99 := map[string]time.Duration{}
	for _, g := range append(groups, "queue-wait", "abuser") {
		d := st.lat[g]
		slices.Sort(d)
		p99[g] = percentile(d, 0.99)
		var mx time.Duration
		if len(d) > 0 {
			mx = d[len(d)-1]
		}
		p("%-10s %7d %9s %9s %9s", g, len(d), ms(percentile(d, 0.5)), ms(p99[g]), ms(mx))
	}
	p("(students' API calls by route group; queue-wait: a run from its 201 to running, not an API call; abuser: its POST /api/runs)")
	bound := 10 + int(math.Ceil(abElapsed.Seconds()/3)) + 1 // the bucket: 10 at once, then one per 3 s
	p("abusive client: %d requests in %s (%.0f/s), %d accepted (201; its token bucket allows at most %d), %d refused (429): %v; other answers %v",
		ab.requests, abElapsed.Round(time.Second), float64(ab.requests)/abElapsed.Seconds(), ab.accepted, bound, ab.requests-ab.accepted-mapSum(ab.other), ab.byLimit, ab.other)
	p("5xx: %d; transport errors: %d; unexpected answers to students: %d", len(st.fiveXX), len(st.netErrs), len(st.unexpected))
	rssMu.Lock()
	samples := slices.Clone(rss)
	rssMu.Unlock()
	var maxKiB, firstHalf, lastHalf int
	half := loadEnd / 2
	var line, queued []string
	for _, s := range samples {
		maxKiB = max(maxKiB, s.kib)
		if s.at <= half {
			firstHalf = max(firstHalf, s.kib)
		} else if s.at <= loadEnd {
			lastHalf = max(lastHalf, s.kib)
		}
		line = append(line, strconv.Itoa(s.kib/1024))
		queued = append(queued, strconv.Itoa(s.queued))
	}
	growth := lastHalf - firstHalf
	p("server RSS MiB every 5 s: %s", strings.Join(line, " "))
	p("runs queued every 5 s:    %s", strings.Join(queued, " "))
	p("server RSS: max %d MiB; max of the load's first half %d MiB, of its second half %d MiB (growth %+d MiB)",
		maxKiB/1024, firstHalf/1024, lastHalf/1024, growth/1024)
	p("server CPU: %.1f s in %s (%.0f%% of %d cores)", cpu.Seconds(), drainEnd.Round(time.Second),
		100*cpu.Seconds()/drainEnd.Seconds()/float64(runtime.NumCPU()), runtime.NumCPU())
	p("server stop on SIGINT: %v", errOK(exitErr))
	report := b.String()
	t.Log("\n" + report)
	path := filepath.Join(dir, "soak-report.txt")
	if *soakOut != "" {
		path = *soakOut
	}
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Errorf("writing the report: %v", err)
	}
	t.Logf("report written to %s", path)

	// ---- what must hold ----
	// Correctness: nothing a student started may vanish, fail or hang, and
	// the server never answers 5xx (bad input is a 4xx, a limit a 429).
	if v.lost > 0 {
		t.Errorf("%d lost runs (want 0): %s", v.lost, strings.Join(first(lost, 10), "; "))
	}
	if len(st.fiveXX) > 0 {
		t.Errorf("%d answers 5xx (want 0): %s", len(st.fiveXX), strings.Join(first(st.fiveXX, 10), "; "))
	}
	if len(st.netErrs) > 0 {
		t.Errorf("%d transport errors (want 0): %s", len(st.netErrs), strings.Join(first(st.netErrs, 10), "; "))
	}
	if len(st.unexpected) > 0 {
		t.Errorf("%d unexpected answers to students: %s", len(st.unexpected), strings.Join(first(st.unexpected, 10), "; "))
	}
	// Fairness: the abusive client does not starve anyone; every student
	// finishes runs.
	if per[0] < 1 {
		t.Errorf("a student finished no run (per student: %v)", per)
	}
	// The limits hold for the abuser whatever its X-Cclab-Client says: at
	// least one 429, each with Retry-After and the limit's name, and no
	// more runs accepted than its one token bucket gives.
	if n := ab.requests - ab.accepted; n < 1 || ab.byLimit["runs-per-minute"]+ab.byLimit["max-client-runs"]+ab.byLimit["work-per-hour"] < 1 {
		t.Errorf("the abusive client was never refused with 429")
	}
	if len(ab.badRefusals) > 0 {
		t.Errorf("429s without Retry-After or a limit naming runs-per-minute, max-client-runs or work-per-hour: %s", strings.Join(ab.badRefusals, "; "))
	}
	if len(ab.other) > 0 {
		t.Errorf("the abusive client got answers other than 201 and 429: %v", ab.other)
	}
	if ab.accepted > bound {
		t.Errorf("the abusive client had %d runs accepted, more than its token bucket's %d: new X-Cclab-Client labels gave it quota", ab.accepted, bound)
	}
	// Latency: API calls never simulate (a run is queued), so even on two
	// saturated cores they answer well under a second; 5 s at p99 is where
	// a student would think the lab broken, generous for noisy CI machines.
	for _, g := range groups {
		if p99[g] > 5*time.Second {
			t.Errorf("p99 latency of %s is %s, over the 5 s bound", g, p99[g])
		}
	}
	// Memory: runs are bounded (8 live per owner, 2 simulating on 2
	// cores) and finished ones live in SQLite, so the server's RSS is flat
	// once warm. 1.5 GiB is what a class VM of 2–4 GB can spare; growth
	// from the load's first half to its second half over 64 MiB + 25% of the
	// first half's peak is a leak (the GC's own swing is a few tens of MiB).
	if len(samples) == 0 {
		t.Logf("no RSS samples (no /proc): memory not checked")
	} else {
		if maxKiB > 1536*1024 {
			t.Errorf("server RSS reached %d MiB, over the 1.5 GiB bound", maxKiB/1024)
		}
		if firstHalf > 0 && lastHalf > 0 && growth > 64*1024+firstHalf/4 {
			t.Errorf("server RSS grew %d MiB in the load's second half (from %d MiB): over 64 MiB + 25%%", growth/1024, firstHalf/1024)
		}
	}
	if exitErr != nil {
		t.Errorf("cclab serve did not stop cleanly on SIGINT: %v", exitErr)
	}
	if t.Failed() {
		t.Logf("server log (tail):\n%s", serverLog())
	}
}

func mapSum(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

func errOK(err error) string {
	if err == nil {
		return "clean"
	}
	return err.Error()
}
