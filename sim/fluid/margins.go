package fluid

import "fmt"

// Margins is what `cclab stability margins` reports: the fixed point, the
// theorems' margins beside the paper's, the exact linear margin and the
// phase margin at the model's RTT. JSON keys are the contract's.
type Margins struct {
	RCPacketsPerS    float64  `json:"rcPacketsPerS"`    // R_C* = C/N
	RTMinusRCBps     float64  `json:"rtMinusRcBps"`     // R_T* − R_C*, bits/s
	QStarPackets     float64  `json:"qStarPackets"`     // Q*
	QHatPackets      float64  `json:"qHatPackets"`      // QCN-AIMD's fixed point
	OmegaStar        float64  `json:"omegaStar"`        // rad/s
	TauStarUs        float64  `json:"tauStarUs"`        // Theorem 1, a3 form
	TauStarPrintedUs float64  `json:"tauStarPrintedUs"` // Theorem 1 as printed (a2 in (17))
	TauStarPaperUs   float64  `json:"tauStarPaperUs"`   // 249
	TauHatUs         float64  `json:"tauHatUs"`         // Theorem 2, evaluated
	TauHatPaperUs    float64  `json:"tauHatPaperUs"`    // 189
	CrossoverRadS    float64  `json:"crossoverRadS"`
	ExactMarginUs    float64  `json:"exactMarginUs"`
	RTTUs            float64  `json:"rttUs"`
	PhaseMarginDeg   float64  `json:"phaseMarginDeg"` // at RTT; negative: the linear QCN loop is unstable
	StableQCN        bool     `json:"stableQcn"`      // RTT < exact margin
	StableQCNAIMD    bool     `json:"stableQcnAimd"`  // RTT < τ̂
	Theorem3LHS23    float64  `json:"theorem3Lhs23"`  // < 0.1
	Theorem3LHS24    float64  `json:"theorem3Lhs24"`  // < 0.2
	AveragingHelps   bool     `json:"averagingHelps"` // τ* > τ̂
	Notes            []string `json:"notes"`
}

// ComputeMargins evaluates every margin of q.
func ComputeMargins(q QCN) (*Margins, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	l := q.Linearise()
	ts, ws := l.TauStar(false)
	tp, _ := l.TauStar(true)
	th, _ := l.TauHat()
	wc, err := l.Crossover()
	if err != nil {
		return nil, err
	}
	ex, _ := l.ExactMargin()
	pm, _ := l.PhaseMargin(q.RTT)
	l23, l24 := q.Theorem3()
	m := &Margins{
		RCPacketsPerS: l.RC, RTMinusRCBps: (l.RT - l.RC) * 8 * q.Packet, QStarPackets: l.Q, QHatPackets: l.QHat,
		OmegaStar: ws, TauStarUs: ts * 1e6, TauStarPrintedUs: tp * 1e6, TauStarPaperUs: TauStarPaper * 1e6,
		TauHatUs: th * 1e6, TauHatPaperUs: TauHatPaper * 1e6, CrossoverRadS: wc, ExactMarginUs: ex * 1e6,
		RTTUs: q.RTT * 1e6, PhaseMarginDeg: pm, StableQCN: q.RTT < ex, StableQCNAIMD: q.RTT < th,
		Theorem3LHS23: l23, Theorem3LHS24: l24, AveragingHelps: ts > th,
	}
	m.Notes = []string{
		"τ* uses Theorem 1 with a3 in (17), as its proof and App. C have it; the printed a2 form is tauStarPrintedUs.",
		fmt.Sprintf("τ̂ evaluated from (21)-(22) (the square root of (22) closed as the crossover equation gives it) is %.1f µs; the paper prints 189 µs for the baseline, which no reading of its formulas reproduces with the parameters that give τ* = 249 µs.", th*1e6),
		"Theorem 1 is sufficient only; the exact margin is the delay that brings the phase at the 0-dB crossover to π.",
	}
	return m, nil
}
