package sim

import (
	"testing"
	"unsafe"
)

// TestPortLayout: a port's fields come in groups by who writes them, a
// cache line per group (portState), so that two lanes at the ends of a link
// between lanes do not share a line; the groups start where the engine
// assumes, the fields a packet touches share as few lines as the engine
// says, and ports are whole lines, so that every port's groups start on
// lines in an array that starts on one.
func TestPortLayout(t *testing.T) {
	var p portState
	for _, c := range []struct {
		name      string
		off, want uintptr
	}{
		{"up (line 0, the link)", unsafe.Offsetof(p.up), 0},
		{"wireBytes (line 1, the wire)", unsafe.Offsetof(p.wireBytes), 64},
		{"paused (the node's own)", unsafe.Offsetof(p.paused), 128},
	} {
		if c.off != c.want {
			t.Errorf("%s at offset %d, want %d", c.name, c.off, c.want)
		}
	}
	if end := unsafe.Offsetof(p.kmin) + unsafe.Sizeof(p.kmin); end > 64 {
		t.Errorf("line 0 (the link) ends at %d, past its line", end)
	}
	if end := unsafe.Offsetof(p.wire) + unsafe.Sizeof(p.wire); end > 128 {
		t.Errorf("line 1 (the wire) ends at %d, past its line", end)
	}
	// the lines a packet touches at a port (see portState): each group
	// lies in one line
	type field struct {
		name      string
		off, size uintptr
	}
	for _, g := range []struct {
		line   string
		fields []field
	}{
		{"line 2, the egress", []field{
			{"paused", unsafe.Offsetof(p.paused), unsafe.Sizeof(p.paused)},
			{"queued", unsafe.Offsetof(p.queued), unsafe.Sizeof(p.queued)},
			{"busyUntil", unsafe.Offsetof(p.busyUntil), unsafe.Sizeof(p.busyUntil)},
			{"bytes", unsafe.Offsetof(p.bytes), unsafe.Sizeof(p.bytes)},
			{"txBytes", unsafe.Offsetof(p.txBytes), unsafe.Sizeof(p.txBytes)},
			{"pmax", unsafe.Offsetof(p.pmax), unsafe.Sizeof(p.pmax)},
		}},
		{"line 3, the queue statistics", []field{
			{"hist", unsafe.Offsetof(p.hist), unsafe.Sizeof(p.hist)},
			{"qmax", unsafe.Offsetof(p.qmax), unsafe.Sizeof(p.qmax)},
		}},
		{"line 4, the class bytes", []field{
			{"busy", unsafe.Offsetof(p.busy), unsafe.Sizeof(p.busy)},
			{"dataPkts", unsafe.Offsetof(p.dataPkts), unsafe.Sizeof(p.dataPkts)},
			{"qBytes[classHigh..classData]", unsafe.Offsetof(p.qBytes), (classData + 1) * unsafe.Sizeof(p.qBytes[0])},
		}},
		{"the queues of classHigh and classData", []field{
			{"q[classHigh..classData]", unsafe.Offsetof(p.q), (classData + 1) * unsafe.Sizeof(p.q[0])},
		}},
		{"the ingress", []field{
			{"pfcSent", unsafe.Offsetof(p.pfcSent), unsafe.Sizeof(p.pfcSent)},
			{"shift", unsafe.Offsetof(p.shift), unsafe.Sizeof(p.shift)},
			{"headroom", unsafe.Offsetof(p.headroom), unsafe.Sizeof(p.headroom)},
			{"in[classHigh..classData+1]", unsafe.Offsetof(p.in), (classData + 2) * unsafe.Sizeof(p.in[0])},
		}},
	} {
		first := g.fields[0].off / 64
		for _, f := range g.fields {
			if f.off/64 != first || (f.off+f.size-1)/64 != first {
				t.Errorf("%s: %s at bytes %d to %d, not all in line %d", g.line, f.name, f.off, f.off+f.size, first)
			}
		}
	}
	if n := unsafe.Sizeof(p); n%64 != 0 {
		t.Errorf("portState is %d bytes, not whole lines: pad its last field to a multiple of 64", n)
	}
	for m, n := 1, 2; n <= 10000; m, n = n, m+n { // 2, 3, 5, 8, ... ports
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(newPorts(n)))); at%64 != 0 {
			t.Errorf("an array of %d ports starts at %#x, not on a cache line", n, at)
			break
		}
	}
}
