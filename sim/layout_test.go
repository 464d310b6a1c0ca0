package sim

import (
	"testing"
	"unsafe"
)

// TestPortLayout: a port's fields come in groups by who writes them, a
// cache line per group (portState), so that two lanes at the ends of a link
// between lanes do not share a line; the groups start where the engine
// assumes, and ports are whole lines, so that every port's groups start on
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
	if n := unsafe.Sizeof(p); n%64 != 0 {
		t.Errorf("portState is %d bytes, not whole lines: portPad (%d) must make it a multiple of 64", n, portPad)
	}
	for m, n := 1, 2; n <= 10000; m, n = n, m+n { // 2, 3, 5, 8, ... ports
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(newPorts(n)))); at%64 != 0 {
			t.Errorf("an array of %d ports starts at %#x, not on a cache line", n, at)
			break
		}
	}
}
