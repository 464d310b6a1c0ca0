package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The calendar queue must return events in exactly the order of the binary
// heap, (time, key), under every scheduling pattern the
// engine produces: dense near-future events, ties at the same picosecond,
// far timers, events at "now", long idle gaps, and rewinds after a pop was
// put back.
func TestCalQueueMatchesHeap(t *testing.T) {
	regimes := []struct {
		name  string
		delta func(r *rand.Rand) Time
	}{
		{"near", func(r *rand.Rand) Time { return Time(r.IntN(3000)) * 1000 }},
		{"ties", func(r *rand.Rand) Time { return Time(r.IntN(3)) * 1024 }},
		{"mixed", func(r *rand.Rand) Time {
			switch r.IntN(10) {
			case 0:
				return Time(r.IntN(1_000_000_000)) // up to 1 ms
			case 1:
				return 0
			default:
				return Time(r.IntN(2_000_000))
			}
		}},
		{"sparse", func(r *rand.Rand) Time { return Time(r.Int64N(int64(50 * Millisecond))) }},
	}
	for _, rg := range regimes {
		t.Run(rg.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(rg.name))))
			var cq calQueue
			cq.init(1024, 2200*Nanosecond)
			var hq eventQueue
			now := Time(0)
			obj := int32(0)
			for step := 0; step < 200_000; step++ {
				if hq.len() == 0 || r.IntN(100) < 52 {
					at := now + rg.delta(r)
					obj++
					cq.push(at, evKick, obj, 0)
					hq.pushEvent(event{at: at, key: eventKey(evKick, obj, 0)})
					continue
				}
				a, b := cq.pop(), hq.pop()
				if a != b {
					t.Fatalf("step %d: calendar gave %+v, heap %+v", step, a, b)
				}
				if a.at < now {
					t.Fatalf("time went back from %d to %d", now, a.at)
				}
				now = a.at
				// sometimes peek past a limit and put the event back, as
				// RunUntil does between slices; then schedule at the limit
				if r.IntN(50) == 0 && hq.len() > 0 {
					e := cq.pop()
					limit := now + (e.at-now)/2
					cq.unpop(e)
					now = limit
					obj++
					cq.push(now, evKick, obj, 0)
					hq.pushEvent(event{at: now, key: eventKey(evKick, obj, 0)})
				}
			}
			for hq.len() > 0 {
				if a, b := cq.pop(), hq.pop(); a != b {
					t.Fatalf("drain: calendar gave %+v, heap %+v", a, b)
				}
			}
			if cq.len() != 0 {
				t.Fatalf("calendar holds %d events after the heap is empty", cq.len())
			}
		})
	}
}

// A wheel that grows and shrinks with the event density still returns the
// heap's order: a burst of tens of thousands of events landing out of
// order within two microseconds (so that inserting has to move many, and
// the wheel doubles its buckets) and then a drain to a handful (so that it
// halves them again).
func TestCalQueueResizeKeepsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var cq calQueue
	cq.init(65536, 2200*Nanosecond)
	var hq eventQueue
	now := Time(0)
	obj := int32(0)
	most, grew, shrank := cq.nb, false, false
	for step := 0; step < 400_000; step++ {
		pushPct := 90 // the burst
		if step >= 150_000 {
			pushPct = 30 // the drain
		}
		if hq.len() == 0 || r.IntN(100) < pushPct {
			at := now + Time(r.IntN(2_000_000))
			obj++
			cq.push(at, evKick, obj, 0)
			hq.pushEvent(event{at: at, key: eventKey(evKick, obj, 0)})
		} else {
			a, b := cq.pop(), hq.pop()
			if a != b {
				t.Fatalf("step %d (%d buckets): calendar gave %+v, heap %+v", step, cq.nb, a, b)
			}
			now = a.at
		}
		if cq.nb > most {
			most, grew = cq.nb, true
		}
		if grew && cq.nb < most {
			shrank = true
		}
	}
	for hq.len() > 0 {
		if a, b := cq.pop(), hq.pop(); a != b {
			t.Fatalf("drain: calendar gave %+v, heap %+v", a, b)
		}
		if cq.nb < most {
			shrank = true
		}
	}
	if !grew || !shrank {
		t.Fatalf("the wheel grew %v (to %d buckets) and shrank %v: the case does not exercise resizing", grew, most, shrank)
	}
	t.Logf("64 → %d buckets and back to %d", most, cq.nb)
}

// A wheel whose crowded buckets hold events of the same picosecond (a
// fabric in lockstep), which no width splits, does not grow: only events
// of other times moved by an insert count towards growing. A steady 3000
// events over 4 µs, on 40 distinct times, in 32768 buckets of 256 ps (about
// 37 events moved per insert) once grew to 65536 buckets and shrank right
// back (fewer than one event per 16 buckets) every 4096 inserts; 40,000
// such events (more than one per 4 buckets) grew the wheel to no avail.
func TestCalendarDoesNotThrash(t *testing.T) {
	for _, steady := range []int{3000, 40_000} {
		t.Run(fmt.Sprint(steady), func(t *testing.T) {
			r := rand.New(rand.NewPCG(19, uint64(steady)))
			var cq calQueue
			cq.init(256, 8*Microsecond)
			if cq.nb != 32768 || cq.shift != 8 {
				t.Fatalf("wheel of %d buckets of %d ps, want 32768 of 256", cq.nb, 1<<cq.shift)
			}
			var hq eventQueue
			now, obj := Time(0), int32(0)
			push := func() {
				at := now + Time(r.IntN(40))*100*Nanosecond
				obj++
				k := int32(r.IntN(1 << 20)) // out of order within a time: inserts move
				cq.push(at, evKick, k, uint32(obj))
				hq.pushEvent(event{at: at, key: eventKey(evKick, k, uint32(obj))})
			}
			for range steady {
				push()
			}
			for step := 0; step < 100_000; step++ {
				a, b := cq.pop(), hq.pop()
				if a != b {
					t.Fatalf("step %d: calendar gave %+v, heap %+v", step, a, b)
				}
				now = a.at
				push()
			}
			if cq.resizes > 0 {
				t.Errorf("the wheel resized %d times (now %d buckets) for a steady %d events", cq.resizes, cq.nb, steady)
			}
		})
	}
}

// place keeps a bucket in (time, key) order and counts the events of
// other times it moved, against a literal model (an insertion by linear
// scan, and a count of the later events of other times), on buckets whose
// events share few times (long runs of one time, which place bisects) or
// many, some with a read position past their start (popped events).
func TestCalendarPlaceMatchesLiteral(t *testing.T) {
	for _, tc := range []struct {
		name  string
		times int // distinct times in the bucket
		head  int // events popped from the bucket's start
	}{
		{"one time", 1, 0},
		{"two times", 2, 0},
		{"few times", 5, 3},
		{"many times", 1000, 0},
		{"many times, popped", 1000, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(tc.times)))
			var q calQueue
			q.init(1<<20, 1<<30) // every event below in bucket 0
			var model []event
			for n := 0; n < 600; n++ {
				e := event{at: Time(r.IntN(tc.times)) * 7, key: r.Uint64N(1 << 40)}
				if n == tc.head && n > 0 {
					// the events so far are popped, as a run pops them;
					// the later ones come after them
					q.buckets[0].head = int32(n)
					model = model[:0]
				}
				if n >= tc.head {
					e.at += 1 << 18
				}
				// the model: insert after every event before e, count the
				// events of other times after it
				j := 0
				for j < len(model) && model[j].less(&e) {
					j++
				}
				model = append(model[:j], append([]event{e}, model[j:]...)...)
				want := 0
				for _, f := range model[j+1:] {
					if f.at != e.at {
						want++
					}
				}
				if got := q.place(e); got != want {
					t.Fatalf("insert %d: moved %d events of other times, want %d", n, got, want)
				}
				bk := &q.buckets[0]
				got := bk.ev[bk.head:]
				if len(got) != len(model) {
					t.Fatalf("insert %d: bucket holds %d events, want %d", n, len(got), len(model))
				}
				for i := range got {
					if got[i] != model[i] {
						t.Fatalf("insert %d: event %d is %+v, want %+v", n, i, got[i], model[i])
					}
				}
			}
		})
	}
}

// peekAt and popUpTo (the parallel lanes' window loop) agree with the heap:
// peekAt names the earliest event without taking it, and popUpTo takes it
// only when it comes no later than the bound, never moving the wheel past
// a refused event (so that events scheduled right after the bound, as the
// lanes' hand-overs are, need no rewind).
func TestCalendarPopUpTo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var cq calQueue
	cq.init(1024, 2200*Nanosecond)
	var hq eventQueue
	now := Time(0)
	obj := int32(0)
	refused, taken := 0, 0
	for step := 0; step < 300_000; step++ {
		if hq.len() == 0 || r.IntN(100) < 55 {
			at := now + Time(r.IntN(3_000_000))
			if r.IntN(20) == 0 {
				at = now + Time(r.IntN(100_000_000)) // far
			}
			obj++
			k := evKind(r.IntN(int(evSample) + 1))
			cq.push(at, k, obj, 0)
			hq.pushEvent(event{at: at, key: eventKey(k, obj, 0)})
			continue
		}
		at, ok := cq.peekAt()
		if !ok || at != hq.h[0].at {
			t.Fatalf("step %d: peekAt = %d, %v; heap's earliest at %d", step, at, ok, hq.h[0].at)
		}
		// a bound just before, at, or after the earliest event, or up to
		// 100 ns before its time
		bt, bk := hq.h[0].at, hq.h[0].key
		switch r.IntN(4) {
		case 0:
			bk--
		case 2:
			bt += Time(r.IntN(1000))
		case 3:
			bt -= 1 + Time(r.IntN(100_000))
			bt = max(bt, now)
			bk = 1<<64 - 1
		}
		e, ok := cq.popUpTo(bt, bk)
		want := hq.h[0].at < bt || (hq.h[0].at == bt && hq.h[0].key <= bk)
		if ok != want {
			t.Fatalf("step %d: popUpTo(%d, %x) took %v, want %v (earliest %+v)", step, bt, bk, ok, want, hq.h[0])
		}
		if !ok {
			refused++
			// an event just after the bound goes in without a rewind: the
			// wheel has not moved past it
			if base := cq.base; bt+1 < base {
				t.Fatalf("step %d: the wheel moved to %d, past the bound %d", step, base, bt)
			}
			if bt+1 >= now && r.IntN(2) == 0 {
				obj++
				cq.push(bt+1, evArrive, obj, 0)
				hq.pushEvent(event{at: bt + 1, key: eventKey(evArrive, obj, 0)})
			}
			continue
		}
		taken++
		if h := hq.pop(); e != h {
			t.Fatalf("step %d: popUpTo gave %+v, heap %+v", step, e, h)
		}
		now = e.at
	}
	if refused < 1000 || taken < 1000 {
		t.Fatalf("only %d refusals and %d takes", refused, taken)
	}
}
