package server

import (
	"encoding/json"
	"slices"
	"sync"
)

// seriesKey names one series of a run.
type seriesKey struct {
	Index  int    `json:"i"`
	Metric string `json:"metric"`
	Entity string `json:"entity"`
}

// point is one decimated (level 1) sample.
type point struct {
	T int64 // picoseconds
	V float64
}

// progressMsg is the "progress" message of the stream, also the live part
// of GET /api/runs/{id}.
type progressMsg struct {
	Type            string  `json:"type"`
	Status          string  `json:"status"`
	Progress        float64 `json:"progress"`
	SimNs           float64 `json:"simNs"`
	Events          uint64  `json:"events"`
	EventsPerSecond float64 `json:"eventsPerSecond"`
	FlowsFinished   int     `json:"flowsFinished"`
	FlowsTotal      int     `json:"flowsTotal"`
	WallSeconds     float64 `json:"wallSeconds"`
	Speed           any     `json:"speed"`
}

// changeMsg is a live parameter change (the "parameter-changed" message).
type changeMsg struct {
	Type   string             `json:"type"`
	Seq    int                `json:"seq"`
	AtNs   float64            `json:"atNs"`
	Params map[string]float64 `json:"params"`
}

// finalMsg ends a stream: "done" (status done or cancelled or interrupted)
// or "failed".
type finalMsg struct {
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Error   string          `json:"error,omitempty"`
	Summary json.RawMessage `json:"summary,omitempty"`
}

// hub holds what viewers of one run see: the decimated series so far, the
// parameter changes, the latest progress and, once over, the final message.
// The simulation publishes into it once per slice and never waits for a
// viewer: each viewer has a notification channel of capacity one, so a
// viewer that falls behind sees one pending notification however many
// publishes it missed, and its next frame carries everything new (frames
// are coalesced).
type hub struct {
	mu       sync.Mutex
	keys     []seriesKey
	pts      [][]point
	changes  []changeMsg
	progress progressMsg
	final    *finalMsg
	bucketNs float64
	viewers  map[*viewer]struct{}
}

type viewer struct {
	notify chan struct{}
}

func newHub(bucketPS int64) *hub {
	return &hub{bucketNs: float64(bucketPS) / 1e3, viewers: map[*viewer]struct{}{}}
}

// publish adds new series, points and progress, then wakes every viewer.
func (h *hub) publish(keys []seriesKey, pts []livePoint, p *progressMsg) {
	h.mu.Lock()
	for _, k := range keys {
		for len(h.keys) <= k.Index {
			h.keys = append(h.keys, seriesKey{Index: len(h.keys)})
			h.pts = append(h.pts, nil)
		}
		h.keys[k.Index] = k
	}
	for _, x := range pts {
		if x.I < len(h.pts) {
			h.pts[x.I] = append(h.pts[x.I], point{x.T, x.V})
		}
	}
	if p != nil {
		h.progress = *p
	}
	h.mu.Unlock()
	h.wake()
}

func (h *hub) addChange(c changeMsg) {
	h.mu.Lock()
	h.changes = append(h.changes, c)
	h.mu.Unlock()
	h.wake()
}

func (h *hub) finish(f finalMsg) {
	h.mu.Lock()
	h.final = &f
	h.progress.Status = f.Status
	h.mu.Unlock()
	h.wake()
}

func (h *hub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for v := range h.viewers {
		select {
		case v.notify <- struct{}{}:
		default:
		}
	}
}

func (h *hub) join() *viewer {
	v := &viewer{notify: make(chan struct{}, 1)}
	v.notify <- struct{}{}
	h.mu.Lock()
	h.viewers[v] = struct{}{}
	h.mu.Unlock()
	return v
}

func (h *hub) leave(v *viewer) {
	h.mu.Lock()
	delete(h.viewers, v)
	h.mu.Unlock()
}

func (h *hub) viewerCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.viewers)
}

// cursor is how far one viewer has been sent.
type cursor struct {
	keys     int
	pts      []int
	changes  int
	progress progressMsg
	final    bool
}

// frame is what one viewer is sent next.
type frame struct {
	samples  *samplesMsg
	changes  []changeMsg
	progress *progressMsg
	final    *finalMsg
	more     bool // the point budget was reached: send another frame soon
}

type samplesMsg struct {
	Type   string       `json:"type"`
	Keys   []seriesKey  `json:"keys,omitempty"` // series first seen in this frame
	Series []seriesData `json:"series"`
	Points int          `json:"points"`
}

type seriesData struct {
	I int       `json:"i"`
	T []float64 `json:"t"` // simulated nanoseconds
	V []float64 `json:"v"`
}

// next builds c's next frame: the series and points it has not seen, with
// simulated time up to tMax (picoseconds; replay paces through it), at most
// budget points, then new changes, the latest progress if it changed, and
// the final message once everything before it was sent. The hub's lock is
// held only to take a snapshot of the slice headers (points are only ever
// appended, so what a header covers never changes); the frame is built
// after, so viewers do not hold up the simulation's publishing.
func (h *hub) next(c *cursor, tMax int64, budget int) frame {
	h.mu.Lock()
	keys := h.keys[c.keys:len(h.keys):len(h.keys)]
	pts := slices.Clone(h.pts)
	changes := h.changes[:len(h.changes):len(h.changes)]
	progress := h.progress
	final := h.final
	h.mu.Unlock()

	var f frame
	sm := &samplesMsg{Type: "samples"}
	if len(keys) > 0 {
		sm.Keys = keys
		c.keys += len(keys)
	}
	for len(c.pts) < len(pts) {
		c.pts = append(c.pts, 0)
	}
	for i, sp := range pts {
		from := c.pts[i]
		to := from
		for to < len(sp) && sp[to].T <= tMax && sm.Points < budget {
			to++
			sm.Points++
		}
		if to == from {
			continue
		}
		d := seriesData{I: i, T: make([]float64, to-from), V: make([]float64, to-from)}
		for j, p := range sp[from:to] {
			d.T[j] = float64(p.T) / 1e3
			d.V[j] = p.V
		}
		sm.Series = append(sm.Series, d)
		c.pts[i] = to
		if sm.Points >= budget {
			f.more = true
			break
		}
	}
	if len(sm.Keys) > 0 || len(sm.Series) > 0 {
		f.samples = sm
	}
	for c.changes < len(changes) && int64(changes[c.changes].AtNs*1e3) <= tMax {
		f.changes = append(f.changes, changes[c.changes])
		c.changes++
	}
	if progress != c.progress && progress.Type != "" {
		p := progress
		f.progress = &p
		c.progress = p
	}
	if final != nil && !c.final && !f.more && tMax == maxTime && c.changes == len(changes) {
		f.final = final
		c.final = true
	}
	return f
}

const maxTime = int64(1<<63 - 1)
