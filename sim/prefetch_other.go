//go:build !amd64 && !arm64

package sim

import "unsafe"

// prefetch is a no-op where the engine has no prefetch instruction.
func prefetch(p unsafe.Pointer) {}
