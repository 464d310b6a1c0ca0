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
//go:embed shipped/*.safetensors
var shipped embed.FS

// ShippedFile is the file of the policy the lab ships for algo, as
// embedded.
func ShippedFile(algo string) ([]byte, error) {
	data, err := shipped.ReadFile("shipped/" + algo + ".safetensors")
	if err != nil {
		return nil, fmt.Errorf("fdcc: no shipped policy for %q", algo)
	}
	return data, nil
}

// Shipped loads the policy the lab ships for algo ("fdcc" or "rlcc").
func Shipped(algo string) (*Policy, map[string]string, error) {
	data, err := ShippedFile(algo)
	if err != nil {
		return nil, nil, err
	}
	p, meta, err := LoadPolicy(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: shipped policy for %s: %w", algo, err)
	}
	return p, meta, nil
}
