//go:build amd64 || arm64

package sim

import "unsafe"

// prefetch asks the CPU to bring the cache line at p closer; it never
// faults and changes nothing the program can see. Go has no prefetch the
// compiler emits for user code, hence the two-instruction assembly.
//
//go:noescape
func prefetch(p unsafe.Pointer)
