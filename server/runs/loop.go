package runs

import (
	"time"

	"cclab/sim"
)

// Stepper is what drives a simulation between two slices of simulated
// time: the server's runs (control requests, pacing, limits, publishing to
// viewers and the store) and the CLI's (progress lines, Ctrl-C) are both
// steppers of the one loop, Drive.
type Stepper interface {
	// Before is called before each slice with the end Drive proposes for
	// it. It returns the end the slice may reach (at most proposed; at or
	// before s.Now() to wait instead), or stop to end the loop.
	Before(s *sim.Sim, proposed sim.Time) (end sim.Time, stop bool)
	// Wait blocks until the run may go on (a control request, the pacing
	// clock, cancellation); Drive calls Before again after it.
	Wait()
	// After is called after each slice.
	After(s *sim.Sim)
}

// Drive runs s in slices of simulated time until it ends or the stepper
// stops it. A slice is sized to take about 20 ms of wall time (doubled
// under 10 ms, halved over 40 ms), so that control requests, pacing and
// Ctrl-C take effect promptly whatever the scenario's event density. The
// engine's error (an invariant violation) ends the loop.
func Drive(s *sim.Sim, st Stepper) error {
	slice := 10 * sim.Microsecond
	for !s.Done() {
		end, stop := st.Before(s, s.Now()+slice)
		if stop {
			return nil
		}
		if end <= s.Now() {
			st.Wait()
			continue
		}
		t0 := time.Now()
		if err := s.RunUntil(end); err != nil {
			return err
		}
		if d := time.Since(t0); d < 10*time.Millisecond && slice < sim.Second {
			slice *= 2
		} else if d > 40*time.Millisecond && slice > sim.Nanosecond {
			slice /= 2
		}
		st.After(s)
	}
	return nil
}
