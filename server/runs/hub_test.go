package runs

import (
	"testing"
	"time"
)

// TestHubNeverBlocksOnViewers publishes far more often than a viewer that
// never takes its notifications could take them: publish must not wait.
func TestHubNeverBlocksOnViewers(t *testing.T) {
	h := newHub(1000)
	for range 10 {
		h.Join() // never drained
	}
	done := make(chan struct{})
	go func() {
		for i := range 100_000 {
			h.publish([]SeriesKey{{Index: 0, Metric: "queue_bytes", Entity: "p"}}, []livePoint{{0, int64(i), 1}}, nil)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("publish blocked on viewers that do not read")
	}
	// a viewer that comes back gets everything, coalesced, within the budget
	v := h.Join()
	<-v.C()
	c := &Cursor{}
	f := h.Next(c, MaxTime, 60_000)
	if f.Samples == nil || f.Samples.Points != 60_000 || !f.More {
		t.Fatalf("first frame: %+v", f.Samples)
	}
	f = h.Next(c, MaxTime, 60_000)
	if f.Samples.Points != 40_000 || f.More {
		t.Fatalf("second frame: %d points, more %v", f.Samples.Points, f.More)
	}
}
