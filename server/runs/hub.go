package runs

import (
	"encoding/json"
	"slices"
	"sync"
)

// The progress stream of a run: what its viewers see, as the messages of
// the WebSocket protocol (scenarios/scenario-format.md, "REST and
// WebSocket"). The simulation publishes into the run's Hub; each viewer
// takes Frames from it at its own pace.

// SeriesKey names one series of a run.
type SeriesKey struct {
	Index  int    `json:"i"`
	Metric string `json:"metric"`
	Entity string `json:"entity"`
}

// point is one decimated (level 1) sample.
type point struct {
	T int64 // picoseconds
	V float64
}

// livePoint is a decimated point on its way from the simulation to the hub.
type livePoint struct {
	I int
	T int64
	V float64
}

// Progress is the "progress" message of the stream, also the live part of
// a run's API view.
type Progress struct {
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

// Change is a live parameter change (the "parameter-changed" message).
type Change struct {
	Type   string             `json:"type"`
	Seq    int                `json:"seq"`
	AtNs   float64            `json:"atNs"`
	Params map[string]float64 `json:"params"`
}

// Final ends a stream: "done" (status done or cancelled or interrupted) or
// "failed".
type Final struct {
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Error   string          `json:"error,omitempty"`
	Summary json.RawMessage `json:"summary,omitempty"`
}

// Samples is the "samples" message: decimated points not sent before.
type Samples struct {
	Type   string       `json:"type"`
	Keys   []SeriesKey  `json:"keys,omitempty"` // series first seen in this frame
	Series []SeriesData `json:"series"`
	Points int          `json:"points"`
}

// SeriesData is one series' new points in a Samples message.
type SeriesData struct {
	I int       `json:"i"`
	T []float64 `json:"t"` // simulated nanoseconds
	V []float64 `json:"v"`
}

// Hub holds what viewers of one run see: the decimated series so far, the
// parameter changes, the latest progress and, once over, the final message.
// The simulation publishes into it once per slice and never waits for a
// viewer: each viewer has a notification channel of capacity one, so a
// viewer that falls behind sees one pending notification however many
// publishes it missed, and its next frame carries everything new (frames
// are coalesced).
type Hub struct {
	mu       sync.Mutex
	keys     []SeriesKey
	pts      [][]point
	changes  []Change
	progress Progress
	final    *Final
	bucketPS int64
	viewers  map[*Viewer]struct{}
}

// Viewer is one reader of a hub.
type Viewer struct {
	notify chan struct{}
}

// C is signalled when the hub has something new for the viewer (at most
// one signal is pending).
func (v *Viewer) C() <-chan struct{} { return v.notify }

// Wake signals the viewer itself (to send another frame soon).
func (v *Viewer) Wake() {
	select {
	case v.notify <- struct{}{}:
	default:
	}
}

func newHub(bucketPS int64) *Hub {
	return &Hub{bucketPS: bucketPS, viewers: map[*Viewer]struct{}{}}
}

// BucketPS is the run's chart bucket (level-1 decimation), picoseconds.
func (h *Hub) BucketPS() int64 { return h.bucketPS }

// publish adds new series, points and progress, then wakes every viewer.
func (h *Hub) publish(keys []SeriesKey, pts []livePoint, p *Progress) {
	h.mu.Lock()
	for _, k := range keys {
		h.addKeyLocked(k)
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

// addKeyLocked makes room for a series and names it.
func (h *Hub) addKeyLocked(k SeriesKey) {
	for len(h.keys) <= k.Index {
		h.keys = append(h.keys, SeriesKey{Index: len(h.keys)})
		h.pts = append(h.pts, nil)
	}
	h.keys[k.Index] = k
}

func (h *Hub) addChange(c Change) {
	h.mu.Lock()
	h.changes = append(h.changes, c)
	h.mu.Unlock()
	h.wake()
}

func (h *Hub) finish(f Final) {
	h.mu.Lock()
	h.final = &f
	h.progress.Status = f.Status
	h.mu.Unlock()
	h.wake()
}

func (h *Hub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for v := range h.viewers {
		v.Wake()
	}
}

// Progress is the run's latest progress (Type is empty before the first).
func (h *Hub) Progress() Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.progress
}

// Join adds a viewer, already signalled so that its first frame goes out
// at once.
func (h *Hub) Join() *Viewer {
	v := &Viewer{notify: make(chan struct{}, 1)}
	v.notify <- struct{}{}
	h.mu.Lock()
	h.viewers[v] = struct{}{}
	h.mu.Unlock()
	return v
}

// Leave removes a viewer.
func (h *Hub) Leave(v *Viewer) {
	h.mu.Lock()
	delete(h.viewers, v)
	h.mu.Unlock()
}

func (h *Hub) viewerCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.viewers)
}

// Cursor is how far one viewer has been sent; the zero value is the start.
type Cursor struct {
	keys     int
	pts      []int
	changes  int
	progress Progress
	final    bool
}

// Frame is what one viewer is sent next.
type Frame struct {
	Samples  *Samples
	Changes  []Change
	Progress *Progress
	Final    *Final
	More     bool // the point budget was reached: send another frame soon
}

// MaxTime is the Next bound that takes everything (no replay pacing).
const MaxTime = int64(1<<63 - 1)

// Next builds c's next frame: the series and points it has not seen, with
// simulated time up to tMax (picoseconds; a paced replay moves it along),
// at most budget points, then new changes, the latest progress if it
// changed, and the final message once everything before it was sent. The
// hub's lock is held only to take a snapshot of the slice headers (points
// are only ever appended, so what a header covers never changes); the frame
// is built after, so viewers do not hold up the simulation's publishing.
func (h *Hub) Next(c *Cursor, tMax int64, budget int) Frame {
	h.mu.Lock()
	keys := h.keys[c.keys:len(h.keys):len(h.keys)]
	pts := slices.Clone(h.pts)
	changes := h.changes[:len(h.changes):len(h.changes)]
	progress := h.progress
	final := h.final
	h.mu.Unlock()

	var f Frame
	sm := &Samples{Type: "samples"}
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
		d := SeriesData{I: i, T: make([]float64, to-from), V: make([]float64, to-from)}
		for j, p := range sp[from:to] {
			d.T[j] = float64(p.T) / 1e3
			d.V[j] = p.V
		}
		sm.Series = append(sm.Series, d)
		c.pts[i] = to
		if sm.Points >= budget {
			f.More = true
			break
		}
	}
	if len(sm.Keys) > 0 || len(sm.Series) > 0 {
		f.Samples = sm
	}
	for c.changes < len(changes) && int64(changes[c.changes].AtNs*1e3) <= tMax {
		f.Changes = append(f.Changes, changes[c.changes])
		c.changes++
	}
	if progress != c.progress && progress.Type != "" {
		p := progress
		f.Progress = &p
		c.progress = p
	}
	if final != nil && !c.final && !f.More && tMax == MaxTime && c.changes == len(changes) {
		f.Final = final
		c.final = true
	}
	return f
}
