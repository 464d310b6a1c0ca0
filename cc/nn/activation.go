package nn

import "math"

// ReLU sets y = max(x, 0) elementwise over len(x); y and x may be the same
// slice.
func ReLU(y, x []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

// ReLUBackward sets dx = dy where the ReLU's output y is positive and 0
// elsewhere (PyTorch's choice at 0), over len(y); dx may be dy.
func ReLUBackward(dx, dy, y []float64) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	for i, v := range y {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}

// Tanh sets y = tanh(x) elementwise over len(x); y and x may be the same
// slice.
func Tanh(y, x []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = math.Tanh(v)
	}
}

// TanhBackward sets dx = dy·(1 − y²) from the Tanh's output y, over
// len(y); dx may be dy.
func TanhBackward(dx, dy, y []float64) {
	dx, dy = dx[:len(y)], dy[:len(y)]
	for i, v := range y {
		dx[i] = dy[i] * (1 - v*v)
	}
}

// sigmoid is the logistic function 1/(1 + e^−x).
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
