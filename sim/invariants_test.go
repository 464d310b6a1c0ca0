package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"cclab/cc"
)

// checkInvariants recomputes the switches' buffer accounting from their
// queues and checks it against the running counters, and checks the byte
// conservation of the whole network.
func (s *Sim) checkInvariants() error {
	if s.check != nil {
		return s.check
	}
	if err := s.Conservation().Check(); err != nil {
		return err
	}
	for pid := range s.ports {
		p := &s.ports[pid]
		if n := int(p.q[classCredit].n); n > 0 && (s.credit == nil || n > s.crQueue) {
			return fmt.Errorf("port %s: %d credits queued (queue of %d)", s.PortName(int32(pid)), n, s.crQueue)
		}
		for c := range p.q {
			if bit := p.queued>>c&1 == 1; bit != (p.q[c].n > 0) {
				return fmt.Errorf("port %s: queue %d holds %d packets, queued bit %v", s.PortName(int32(pid)), c, p.q[c].n, bit)
			}
		}
		for k := 0; k < int(p.q[classCredit].n); k++ {
			if pk := s.pk.at(p.q[classCredit].at(k)); pk.kind != pktCredit {
				return fmt.Errorf("port %s: a %s packet in the credit queue", s.PortName(int32(pid)), pktKindNames[pk.kind])
			}
		}
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.kind != Switch {
			continue
		}
		var queued, in, hdrm, shared int64
		for _, pid := range n.ports {
			p := &s.ports[pid]
			var all int64
			for c := range p.qBytes {
				all += p.qBytes[c]
			}
			if p.bytes != all {
				return fmt.Errorf("port %s: %d bytes but classes hold %v", s.PortName(pid), p.bytes, p.qBytes)
			}
			for c := uint8(classData); c < nClass; c++ {
				var sum int64
				for k := 0; k < int(p.q[c].n); k++ {
					pk := s.pk.at(p.q[c].at(k))
					if pk.class != c {
						return fmt.Errorf("port %s: a class %d packet in queue %d", s.PortName(pid), pk.class, c)
					}
					sum += int64(pk.size)
				}
				if sum != p.qBytes[c] {
					return fmt.Errorf("port %s: data queue %d holds %d B, counted %d", s.PortName(pid), c, sum, p.qBytes[c])
				}
				if c > s.nData && (sum != 0 || p.in[c].bytes != 0 || p.in[c].hdrm != 0) {
					return fmt.Errorf("port %s: class %d used with %d data classes", s.PortName(pid), c, s.nData)
				}
				queued += sum
				in += p.in[c].bytes
				hdrm += p.in[c].hdrm
				if p.in[c].bytes > s.cfg.Switch.Reserve {
					shared += p.in[c].bytes - s.cfg.Switch.Reserve
				}
			}
		}
		if queued != n.mmu.used {
			return fmt.Errorf("switch %s: %d data bytes queued, buffer counts %d", n.name, queued, n.mmu.used)
		}
		if s.cfg.Switch.PFC && (in+hdrm != n.mmu.used || shared != n.mmu.sharedUsed) {
			return fmt.Errorf("switch %s: ingress %d + headroom %d vs used %d; shared %d vs %d",
				n.name, in, hdrm, n.mmu.used, shared, n.mmu.sharedUsed)
		}
	}
	return nil
}

func noneSpec(w float64) AlgoSpec {
	a, _ := cc.Lookup("none")
	p, _ := a.Resolve("", map[string]float64{"windowBDPs": w}, 0)
	return AlgoSpec{Algo: a, Params: p}
}

// randomRun builds a small random leaf-spine run with link flaps, loss,
// parameter changes, small buffers and PFC on or off.
func randomRun(r *rand.Rand) Config {
	leaves, spines, hosts := 1+r.IntN(3), 1+r.IntN(3), 2+r.IntN(6)
	var nodes []NodeSpec
	for i := 0; i < hosts; i++ {
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("h%d", i), Kind: Host})
	}
	for i := 0; i < leaves; i++ {
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("l%d", i), Kind: Switch})
	}
	for i := 0; i < spines; i++ {
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("s%d", i), Kind: Switch})
	}
	rates := []int64{10e9, 25e9, 100e9, 400e9}
	hostRate := rates[r.IntN(3)]
	var links []LinkSpec
	for i := 0; i < hosts; i++ {
		links = append(links, LinkSpec{A: i, B: hosts + i%leaves, Rate: hostRate, Delay: Time(r.IntN(2000)) * Nanosecond})
	}
	if leaves > 1 {
		for i := 0; i < leaves; i++ {
			for j := 0; j < spines; j++ {
				links = append(links, LinkSpec{A: hosts + i, B: hosts + leaves + j, Rate: rates[r.IntN(4)], Delay: Time(r.IntN(2000)) * Nanosecond})
			}
		}
	}
	cfg := Config{Nodes: nodes, Links: links, Host: DefaultHost(), Switch: DefaultSwitch(), Seed: r.Uint64(),
		Algos: []AlgoSpec{noneSpec(float64(r.IntN(3)))}, Duration: Time(200+r.IntN(800)) * Microsecond,
		Telemetry: TelemetryConfig{Interval: 5 * Microsecond, AllQueues: true, AllFlows: true}}
	cfg.Switch.PFC = r.IntN(3) > 0
	cfg.Switch.Buffer = int64(1+r.IntN(8)) << 20
	cfg.Host.AckEvery = 1 + r.IntN(3)
	if r.IntN(2) == 0 {
		cfg.Switch.ECN = ECNConfig{Enabled: true, Kmin: 20_000, Kmax: 200_000, Pmax: 0.5}
	}
	for i := 0; i < 3+r.IntN(12); i++ {
		src, dst := r.IntN(hosts), r.IntN(hosts)
		if src == dst {
			dst = (dst + 1) % hosts
		}
		cfg.Flows = append(cfg.Flows, FlowSpec{Src: src, Dst: dst, Size: 1 + r.Int64N(3_000_000),
			Start: Time(r.IntN(100)) * Microsecond, Group: -1, After: -1})
	}
	names := PortNames(nodes, links)
	for i := 0; i < r.IntN(4); i++ {
		at := Time(r.IntN(int(cfg.Duration/Microsecond))) * Microsecond
		port := names[r.IntN(len(names))]
		switch r.IntN(3) {
		case 0:
			cfg.Events = append(cfg.Events, EventSpec{At: at, Kind: EventLinkDown, Port: port},
				EventSpec{At: at + Time(r.IntN(100))*Microsecond, Kind: EventLinkUp, Port: port})
		case 1:
			cfg.Events = append(cfg.Events, EventSpec{At: at, Kind: EventLoss, Port: port, Loss: r.Float64() * 0.2})
		default:
			cfg.Events = append(cfg.Events, EventSpec{At: at, Kind: EventParams, Algo: -1,
				Params: map[string]float64{"windowBDPs": float64(r.IntN(4))}})
		}
	}
	return cfg
}

type keep struct{ s []Sample }

func (k *keep) Observe(b []Sample) { k.s = append(k.s, b...) }

// wholeAndSliced runs cfg in one call and again in slices of a random
// size, checks every invariant at the end and after every slice, and that
// both give the same results and samples; it returns the whole run.
func wholeAndSliced(t *testing.T, r *rand.Rand, cfg Config, label string) *Sim {
	t.Helper()
	whole, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	wk := &keep{}
	whole.Subscribe(wk)
	if err := whole.Run(); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if err := whole.checkInvariants(); err != nil {
		t.Fatalf("%s at the end: %v", label, err)
	}
	sliced, _ := New(cfg)
	sk := &keep{}
	sliced.Subscribe(sk)
	step := Time(1 + r.IntN(5000000))
	for !sliced.Done() {
		if err := sliced.RunUntil(sliced.Now() + step); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if err := sliced.checkInvariants(); err != nil {
			t.Fatalf("%s at %d ps: %v", label, sliced.Now(), err)
		}
	}
	if !reflect.DeepEqual(whole.Result(), sliced.Result()) || !reflect.DeepEqual(wk.s, sk.s) {
		t.Fatalf("%s: slicing by %d ps changed the results", label, step)
	}
	return whole
}

// Random runs keep every invariant after every slice, whatever the slicing,
// and give exactly the same results and samples whether run in one call or
// in slices of any size.
func TestRandomRunsInvariantsAndSlicing(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	n := 60
	if testing.Short() {
		n = 15
	}
	for i := 0; i < n; i++ {
		wholeAndSliced(t, r, randomRun(r), fmt.Sprintf("case %d", i))
	}
}

// A link going down can send a packet back out over the link it came in on;
// releasing its buffer then queues a RESUME on the port that is picking it.
// The port must still send one frame at a time.
func TestUTurnAfterLinkDown(t *testing.T) {
	var nodes []NodeSpec
	for i := 0; i < 5; i++ {
		nodes = append(nodes, NodeSpec{Name: fmt.Sprintf("h%d", i), Kind: Host})
	}
	nodes = append(nodes, NodeSpec{Name: "l0", Kind: Switch}, NodeSpec{Name: "l1", Kind: Switch},
		NodeSpec{Name: "s0", Kind: Switch}, NodeSpec{Name: "s1", Kind: Switch})
	var links []LinkSpec
	for i := 0; i < 4; i++ {
		links = append(links, LinkSpec{A: i, B: 5, Rate: 100e9, Delay: Microsecond})
	}
	links = append(links, LinkSpec{A: 4, B: 6, Rate: 100e9, Delay: Microsecond})
	for l := 5; l <= 6; l++ {
		for sp := 7; sp <= 8; sp++ {
			links = append(links, LinkSpec{A: l, B: sp, Rate: 100e9, Delay: Microsecond})
		}
	}
	for _, at := range []Time{20, 50, 100, 200} {
		cfg := Config{Nodes: nodes, Links: links, Host: DefaultHost(), Switch: DefaultSwitch(), Seed: 1,
			Algos: []AlgoSpec{noneSpec(0)}, Duration: 2 * Millisecond}
		cfg.Switch.Buffer = 300_000
		for i := 0; i < 4; i++ {
			for k := 0; k < 4; k++ {
				cfg.Flows = append(cfg.Flows, FlowSpec{Src: i, Dst: 4, Size: 2_000_000, Group: -1, After: -1})
			}
		}
		cfg.Events = []EventSpec{{At: at * Microsecond, Kind: EventLinkDown, Port: "l1->s0"}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil { // the engine flags a port that transmits while busy
			t.Fatalf("down at %d µs: %v", at, err)
		}
		if err := s.checkInvariants(); err != nil {
			t.Fatal(err)
		}
	}
}

// The same with several data classes, the class chosen per packet (flows
// change class mid-flow, and some ask for a class beyond the last): every
// invariant holds per class after every slice, and slicing changes nothing.
func TestRandomRunsDataClasses(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := 0; i < n; i++ {
		cfg := randomRun(r)
		cfg.Switch.DataClasses = 1 + r.IntN(MaxDataClasses)
		cfg.Switch.Buffer *= int64(cfg.Switch.DataClasses) // headroom and reserve per class
		mod := int64(1 + r.IntN(9))
		pt := &PrioTest{Class: func(flow int32, seq int64) int { return int((int64(flow) + seq/20_000) % mod) }}
		if r.IntN(2) == 0 {
			pt.Window = int64(10_000 + r.IntN(200_000))
		}
		cfg.Algos = []AlgoSpec{PrioAlgo(pt)}
		wholeAndSliced(t, r, cfg, fmt.Sprintf("case %d", i))
	}
}

// The same with the receiver-driven algorithms (Homa with random
// spraying, ExpressPass with its credit queues): control packets, credits,
// out-of-order receivers and resends keep every invariant after every
// slice, on lossy and lossless fabrics, and slicing changes nothing.
func TestRandomRunsReceiverDriven(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	n := 30
	if testing.Short() {
		n = 8
	}
	var finished int
	var ctrl, credits, drops int64
	defer func() {
		t.Logf("%d flows finished; %d B of control packets, %d B of credits, %d drops", finished, ctrl, credits, drops)
		if finished == 0 || ctrl == 0 || credits == 0 || drops == 0 {
			t.Error("the random runs did not exercise finishing flows, control packets, credits and drops")
		}
	}()
	for i := 0; i < n; i++ {
		cfg := randomRun(r)
		name := []string{"homa", "expresspass"}[r.IntN(2)]
		a, _ := cc.Lookup(name)
		p, errs := a.Resolve("", map[string]float64{"spray": float64(r.IntN(2))}, 0)
		if name == "expresspass" {
			p, errs = a.Resolve("", nil, 0)
		}
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		cfg.Algos = []AlgoSpec{{Algo: a, Params: p}}
		cfg.Events = slices.DeleteFunc(cfg.Events, func(e EventSpec) bool { return e.Kind == EventParams }) // none's parameter
		cfg.Switch.DataClasses = 1 + r.IntN(MaxDataClasses)
		cfg.Switch.Buffer *= int64(cfg.Switch.DataClasses)
		whole := wholeAndSliced(t, r, cfg, fmt.Sprintf("case %d (%s)", i, name))
		finished += whole.finished
		ctrl += whole.cnt.created[pktCtrl]
		credits += whole.cnt.created[pktCredit]
		drops += whole.cnt.drops
	}
}
