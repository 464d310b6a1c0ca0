package sim

import (
	"errors"
	"fmt"
	"sort"
)

// PortName returns the name of port pid ("node->peer").
func (s *Sim) PortName(pid int32) string {
	if s.portNames == nil {
		s.portNames = PortNames(s.cfg.Nodes, s.cfg.Links)
	}
	if pid < 0 || int(pid) >= len(s.portNames) {
		return fmt.Sprintf("port%d", pid)
	}
	return s.portNames[pid]
}

// PortID finds a port by name.
func (s *Sim) PortID(name string) (int32, bool) {
	if s.portIDs == nil {
		s.portIDs = map[string]int32{}
		for i := range s.ports {
			s.portIDs[s.PortName(int32(i))] = int32(i)
		}
	}
	id, ok := s.portIDs[name]
	return id, ok
}

func (s *Sim) runScript(i int) {
	s.scripts--
	e := &s.cfg.Events[i]
	switch e.Kind {
	case EventParams:
		if err := s.ApplyParams(e.Algo, e.Params); err != nil {
			s.violate("event %d: %v", i, err)
		}
	case EventLinkDown, EventLinkUp:
		pid, _ := s.PortID(e.Port)
		s.setLink(pid, e.Kind == EventLinkUp)
	case EventLoss:
		pid, _ := s.PortID(e.Port)
		s.ports[pid].loss = e.Loss
		s.ports[pid^1].loss = e.Loss
	}
}

// ApplyParams changes algorithm parameters now: for algorithm index algo
// (or, with algo < 0, every algorithm of the run that has the parameter),
// in every live flow, receiver and congestion point, and for flows that
// start later. Names and values are checked against the registry first, and
// nothing changes if one is wrong; an algorithm that then refuses a value it
// declared valid is a bug, reported as an error (earlier flows keep it).
func (s *Sim) ApplyParams(algo int, params map[string]float64) error {
	if s.par != nil {
		return errors.New("sim: live parameter changes need a run in one lane (SetLanes)")
	}
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	targets := make([]int, 0, len(s.algos))
	for i := range s.algos {
		if algo >= 0 && i != algo {
			continue
		}
		targets = append(targets, i)
	}
	for _, name := range names {
		found := false
		for _, i := range targets {
			p, ok := s.algos[i].spec.Algo.FindParam(name)
			if !ok {
				continue
			}
			found = true
			if !p.Live {
				return fmt.Errorf("%s.%s cannot change during a run", s.algos[i].spec.Algo.Name, name)
			}
			if err := p.Check(params[name]); err != nil {
				return fmt.Errorf("%s.%s: %w", s.algos[i].spec.Algo.Name, name, err)
			}
		}
		if !found {
			return fmt.Errorf("no algorithm of this run has a parameter %q", name)
		}
	}
	for _, i := range targets {
		a := &s.algos[i]
		for _, name := range names {
			if _, ok := a.spec.Algo.FindParam(name); !ok {
				continue
			}
			v := params[name]
			a.params[name] = v
			for fid := range s.flows {
				f := &s.flows[fid]
				if f.state != flowActive || int(f.algo) != i {
					continue
				}
				if err := f.sender.SetParam(f.env, name, v); err != nil {
					return fmt.Errorf("flow %d: %w", fid, err)
				}
				s.afterCC(f)
			}
			for k := range s.rx {
				if rx := &s.rx[k]; int(rx.algo) == i {
					if err := rx.r.SetParam(name, v); err != nil {
						return fmt.Errorf("receiver at %s: %w", s.nodes[rx.host].name, err)
					}
				}
			}
			if s.flowCount && name == a.spec.Algo.INT.FlowCountTimeoutParam {
				s.fc.timeout = s.flowCountTimeout()
			}
			for pid := range s.ports {
				if cp := s.ports[pid].cp; cp != nil && s.cpAlgo == i {
					if err := cp.SetParam(name, v); err != nil {
						return fmt.Errorf("congestion point %s: %w", s.PortName(int32(pid)), err)
					}
				}
			}
		}
	}
	return nil
}

// setLink takes the link of port pid down or brings it up, both directions.
// Going down drops what is queued at either end and what is on the wire, and
// clears PFC state on the link (as HPCC's TakeDown). Routing is recomputed
// over the links that are up; flows re-pick their NIC port, and switches send
// later packets along the new shortest paths. A flow with no path left
// stalls until the link returns.
func (s *Sim) setLink(pid int32, up bool) {
	for _, d := range [2]int32{pid, pid ^ 1} {
		p := &s.ports[d]
		if p.up == up {
			continue
		}
		if up {
			p.up = true
			continue
		}
		p.up = false
		for p.wire.n > 0 {
			slot := p.wire.pop()
			p.wireBytes -= int64(s.pk.at(slot.id).size)
			s.drop(slot.id, d)
		}
		p.wireGen++
		for cl := uint8(0); cl < nQueue; cl++ {
			for p.q[cl].n > 0 {
				s.drop(s.release(p, cl), d)
			}
		}
		if p.paused != 0 {
			p.paused = 0
			p.pausedTotal += s.now - p.pausedSince
		}
		p.pfcSent = 0
		p.kickPending = false
		p.kickGen++
	}
	s.rt.compute(s)
	for fid := range s.flows {
		f := &s.flows[fid]
		if f.state == flowActive {
			s.bindFlow(f)
			if f.port >= 0 {
				s.wake(f.port, s.now)
			}
		}
	}
	if up {
		s.transmit(pid)
		s.transmit(pid ^ 1)
	}
}
