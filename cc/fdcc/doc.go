// Package fdcc holds FDCC's neural networks: the LSTM-TD3 actor and twin
// critics (Meng, Gorbet and Kulić, "Memory-based Deep Reinforcement
// Learning for POMDPs", IROS 2021; code github.com/LinghengMeng/LSTM-TD3,
// lstm_td3/lstm_td3_main.py), which FDCC's thesis builds on (seed 001,
// shared/spec/seeds/001-fdcc.md §1.6, §1.7, §7.4), the Policy a flow runs
// and the TD3 learner that trains it. It is plain Go on package cc/nn and
// knows nothing of the simulator: observations, actions and rewards are
// numbers the caller supplies.
//
// # Networks
//
// Both networks have a memory branch over the history of the last ≤ Hist
// observations (oldest first, zero-padded, with its length) and a current
// branch, as LSTM-TD3's MLPActor and MLPCritic with their function
// defaults (one layer each, every hidden size Arch.Hidden, no past actions
// in the history):
//
//	memory   history → FC+ReLU → LSTM → hidden state at the last valid step → FC+ReLU
//	current  actor: obs → FC+ReLU          critic: (obs, action) → FC+ReLU
//	combined [memory, current] → FC+ReLU → FC → actor: tanh × ActLimit; critic: Q
//
// A history of length 0 is read as the reference reads it: its gather
// index is clamped to the first step (tmp_hist_seg_len[hist_seg_len == 0]
// = 1) of a zero-padded history, so the memory branch runs the LSTM one
// step on a zero observation. (The generic nn.LSTM returns the zero vector
// for a length-0 sequence; the networks never give it one.)
//
// The parameters carry the reference's PyTorch module names, under "actor.",
// "q1." and "q2." (the reference's pi, q1, q2):
//
//	mem_pre_lstm_layers.0.{weight,bias}
//	mem_lstm_layers.0.{weight_ih_l0,weight_hh_l0,bias_ih_l0,bias_hh_l0}
//	mem_after_lstm_layers.0.{weight,bias}
//	cur_feature_layers.0.{weight,bias}
//	post_combined_layers.0.{weight,bias}
//	post_combined_layers.2.{weight,bias}
//
// (index 1 and 3 of post_combined_layers are the ReLU and the output
// activation, which have no parameters).
package fdcc
