package fdcc

import (
	"fmt"
	"math"
	"strconv"
)

// Arch is the shape of FDCC's networks.
type Arch struct {
	// Obs is the size of one observation.
	Obs int
	// Hist is the longest history the memory branch reads (the thesis:
	// at most 8).
	Hist int
	// Hidden is the size of every hidden layer: the FCs and the LSTM
	// (the reference uses 128).
	Hidden int
	// ActLimit bounds the one-dimensional action: the actor outputs
	// tanh(·) × ActLimit.
	ActLimit float64
}

// Limits on Arch's sizes, far above any use, so that a corrupt file cannot
// make a loader allocate without bound.
const (
	maxObs    = 1 << 12
	maxHist   = 1 << 8
	maxHidden = 1 << 12
)

// Validate returns an error unless every size is positive (and within
// sanity limits) and ActLimit is positive and finite.
func (a Arch) Validate() error {
	switch {
	case a.Obs < 1 || a.Obs > maxObs:
		return fmt.Errorf("fdcc: arch: Obs %d is not in [1, %d]", a.Obs, maxObs)
	case a.Hist < 1 || a.Hist > maxHist:
		return fmt.Errorf("fdcc: arch: Hist %d is not in [1, %d]", a.Hist, maxHist)
	case a.Hidden < 1 || a.Hidden > maxHidden:
		return fmt.Errorf("fdcc: arch: Hidden %d is not in [1, %d]", a.Hidden, maxHidden)
	case !(a.ActLimit > 0) || math.IsInf(a.ActLimit, 0):
		return fmt.Errorf("fdcc: arch: ActLimit %v is not positive and finite", a.ActLimit)
	}
	return nil
}

// Metadata keys of the files this package writes. Keys starting with
// "fdcc." are reserved.
const (
	metaFormat   = "fdcc.format"
	metaObs      = "fdcc.arch.obs"
	metaHist     = "fdcc.arch.hist"
	metaHidden   = "fdcc.arch.hidden"
	metaActLimit = "fdcc.arch.act_limit"
	reserved     = "fdcc."
)

// File formats, the value of metaFormat.
const (
	formatPolicy     = "cclab-fdcc-policy/1"
	formatCheckpoint = "cclab-fdcc-checkpoint/1"
)

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (a Arch) putMeta(m map[string]string) {
	m[metaObs] = strconv.Itoa(a.Obs)
	m[metaHist] = strconv.Itoa(a.Hist)
	m[metaHidden] = strconv.Itoa(a.Hidden)
	m[metaActLimit] = formatFloat(a.ActLimit)
}

func metaInt(m map[string]string, key string) (int, error) {
	s, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("fdcc: metadata %s is missing", key)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("fdcc: metadata %s: %w", key, err)
	}
	return v, nil
}

func metaFloat(m map[string]string, key string) (float64, error) {
	s, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("fdcc: metadata %s is missing", key)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("fdcc: metadata %s: %w", key, err)
	}
	return v, nil
}

func archFromMeta(m map[string]string) (Arch, error) {
	var a Arch
	var err error
	if a.Obs, err = metaInt(m, metaObs); err != nil {
		return a, err
	}
	if a.Hist, err = metaInt(m, metaHist); err != nil {
		return a, err
	}
	if a.Hidden, err = metaInt(m, metaHidden); err != nil {
		return a, err
	}
	if a.ActLimit, err = metaFloat(m, metaActLimit); err != nil {
		return a, err
	}
	return a, a.Validate()
}
