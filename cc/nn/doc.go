// Package nn is a small float64 neural-network kit for the lab's learned
// congestion controllers: dense layers, a single-layer LSTM with PyTorch's
// parameterisation, ReLU and Tanh, their forward and backward passes over
// mini-batches, named parameters, the Adam optimiser and safetensors files.
//
// Everything is explicit: a layer's Forward writes into buffers the caller
// owns, its Backward adds parameter gradients into each Param's Grad (as
// PyTorch accumulates .grad) and writes input gradients when asked. There is
// no autograd and no global state; random initialisation takes the caller's
// *rand.Rand.
//
// Layouts are row-major: a batch of n vectors of size k is one slice of
// n·k values, and a batch of n sequences of T steps of size k is n·T·k
// values, sequence-major (PyTorch's batch_first=True).
package nn
