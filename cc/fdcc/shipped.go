package fdcc

import (
	"bytes"
	"embed"
	"fmt"
)

// The policies the lab ships, one per learned algorithm, trained by
// `cclab train` (the command, seed, episodes and wall time are in each
// file's metadata and in shipped/README.md).
//
//go:embed shipped
var shipped embed.FS

// Shipped loads the policy the lab ships for algo ("fdcc" or "rlcc").
func Shipped(algo string) (*Policy, map[string]string, error) {
	data, err := shipped.ReadFile("shipped/" + algo + ".safetensors")
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: no shipped policy for %q", algo)
	}
	p, meta, err := LoadPolicy(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: shipped policy for %s: %w", algo, err)
	}
	return p, meta, nil
}
