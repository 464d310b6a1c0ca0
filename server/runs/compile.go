package runs

import (
	"sync"

	"cclab/scenarios"
	"cclab/sim"
)

// Compiled is a scenario parsed, validated and built once: what validation
// reports on and what a run executes. The engine Compile builds to check
// the scenario is kept for the first run of it, so a run that starts at
// once does not build it again.
type Compiled struct {
	Scenario  *scenarios.Scenario
	Canonical []byte // the normalised document (defaults filled, sorted)
	Config    *sim.Config
	Meta      *scenarios.Meta
	Cost      Cost
	// Refused is the limit a run of it would exceed; the engine is then
	// not built (a scenario too big to run is not built to check it).
	Refused *Error

	mu  sync.Mutex
	sim *sim.Sim // built by Compile, handed to the first Engine call
}

// Compile parses, validates and builds a scenario document, then checks
// its cost against limits and, within them, builds the engine. Every
// problem is an Invalid Error naming its field under prefix (where the
// scenario sits in a request; "" for a document of its own).
func Compile(doc []byte, limits Limits, prefix string) (*Compiled, error) {
	return CompileWith(doc, limits, prefix, scenarios.BuildOptions{})
}

// CompileWith is Compile with build options (how a learned algorithm's
// policy names resolve).
func CompileWith(doc []byte, limits Limits, prefix string, opt scenarios.BuildOptions) (*Compiled, error) {
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return nil, InvalidScenario(err, prefix)
	}
	return compileParsed(sc, limits, prefix, opt)
}

// Check is CompileWith without building the engine: the scenario parsed,
// validated, built into a configuration and costed against limits (the
// engine's own checks are left to the run). A sweep checks every point of
// its grid this way before anything runs.
func Check(doc []byte, limits Limits, prefix string, opt scenarios.BuildOptions) (*Compiled, error) {
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return nil, InvalidScenario(err, prefix)
	}
	return checkParsed(sc, limits, prefix, opt)
}

func checkParsed(sc *scenarios.Scenario, limits Limits, prefix string, opt scenarios.BuildOptions) (*Compiled, error) {
	canon, err := sc.Canonical()
	if err != nil {
		return nil, InvalidScenario(err, prefix)
	}
	cfg, meta, err := scenarios.BuildCanonical(canon, opt)
	if err != nil {
		return nil, InvalidScenario(err, prefix)
	}
	c := &Compiled{Scenario: sc, Canonical: canon, Config: cfg, Meta: meta, Cost: Estimate(cfg)}
	c.Refused = limits.Check(c.Cost)
	return c, nil
}

func compileParsed(sc *scenarios.Scenario, limits Limits, prefix string, opt scenarios.BuildOptions) (*Compiled, error) {
	c, err := checkParsed(sc, limits, prefix, opt)
	if err != nil || c.Refused != nil {
		return c, err
	}
	if c.sim, err = sim.New(*c.Config); err != nil {
		return nil, InvalidScenario(err, prefix)
	}
	return c, nil
}

// Runnable reports whether a run of it is within the limits it was
// compiled under.
func (c *Compiled) Runnable() bool { return c.Refused == nil }

// Engine returns an engine for one run: the one Compile built, the first
// time, and a new one after that (or after Release).
func (c *Compiled) Engine() (*sim.Sim, error) {
	c.mu.Lock()
	s := c.sim
	c.sim = nil
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	return sim.New(*c.Config)
}

// Release drops the engine Compile built (a run that waits in a queue does
// not hold one; it builds its own when it starts).
func (c *Compiled) Release() {
	c.mu.Lock()
	c.sim = nil
	c.mu.Unlock()
}
