package fdcc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"cclab/cc/nn"
)

// Files are safetensors (package nn) of F64 tensors. A policy file holds
// the actor's parameters under their names ("actor.mem_pre_lstm_layers.0.weight"
// and so on, see the package documentation) and the architecture in the
// metadata; a checkpoint holds the whole learner. Metadata keys starting
// with "fdcc." are this package's.

// Checkpoint metadata keys.
const (
	metaPolyak      = "fdcc.td3.polyak"
	metaPiLR        = "fdcc.td3.pi_lr"
	metaQLR         = "fdcc.td3.q_lr"
	metaTargetNoise = "fdcc.td3.target_noise"
	metaNoiseClip   = "fdcc.td3.noise_clip"
	metaPolicyDelay = "fdcc.td3.policy_delay"
	metaPreAct      = "fdcc.td3.preact_penalty"
	metaAdamEps     = "fdcc.td3.adam_eps"
	metaUpdates     = "fdcc.td3.updates"
	metaRNG         = "fdcc.td3.rng"
)

// Checkpoint tensor prefixes besides the networks' own names.
const (
	prefixTarget = "target."
	prefixPiOpt  = "adam_pi."
	prefixQOpt   = "adam_q."
)

// header returns the metadata of a file: the caller's meta, which may not
// use the reserved prefix, plus the format and the architecture.
func header(meta map[string]string, format string, a Arch) (map[string]string, error) {
	m := make(map[string]string, len(meta)+8)
	for k, v := range meta {
		if strings.HasPrefix(k, reserved) {
			return nil, fmt.Errorf("fdcc: metadata key %q uses the reserved prefix %q", k, reserved)
		}
		m[k] = v
	}
	m[metaFormat] = format
	a.putMeta(m)
	return m, nil
}

// SavePolicy writes p's actor with meta (keys starting with "fdcc." are
// reserved) and p's architecture as metadata.
func SavePolicy(w io.Writer, p *Policy, meta map[string]string) error {
	m, err := header(meta, formatPolicy, p.arch)
	if err != nil {
		return err
	}
	if err := nn.WriteSafetensors(w, p.actor.params.Tensors(""), m); err != nil {
		return fmt.Errorf("fdcc: saving the policy: %w", err)
	}
	return nil
}

// LoadPolicy reads a policy SavePolicy wrote. It returns the file's whole
// metadata, the caller's keys and this package's. A missing tensor, one of
// the wrong shape for the architecture, an unexpected one, or a NaN is an
// error naming the tensor.
func LoadPolicy(r io.Reader) (*Policy, map[string]string, error) {
	f, err := nn.ReadSafetensors(r)
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: loading a policy: %w", err)
	}
	switch got := f.Meta[metaFormat]; {
	case got == "":
		return nil, nil, fmt.Errorf("fdcc: loading a policy: the file has no %s metadata, so it is not a cclab policy "+
			"(a PyTorch LSTM-TD3 actor converts with `cclab import pytorch`)", metaFormat)
	case got != formatPolicy:
		return nil, nil, fmt.Errorf("fdcc: loading a policy: format %q, want %q", got, formatPolicy)
	}
	arch, err := archFromMeta(f.Meta)
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: loading a policy: %w", err)
	}
	actor := newNet(arch, false, "actor", zeroRNG())
	if err := loadStrict(f, actor.params, ""); err != nil {
		return nil, nil, fmt.Errorf("fdcc: loading a policy: %w", err)
	}
	return &Policy{arch: arch, actor: actor}, f.Meta, nil
}

// ImportPyTorch reads the actor of a PyTorch LSTM-TD3 model saved as
// safetensors (for example safetensors.torch.save_file(ac.state_dict(),
// path)), with tensors of any dtype ReadSafetensors takes (F32 as PyTorch
// saves them, F16, BF16, F64). prefix selects the actor: "pi." for an
// MLPActorCritic's state_dict, "" for a bare MLPActor's; the names under
// it are the reference's (mem_pre_lstm_layers.0.weight and so on). The
// model must have LSTM-TD3's default layout, one layer per block, sized
// as arch says, and no past actions in the history; a missing tensor, a
// wrong shape, an unexpected tensor under prefix (another layout), or a NaN
// is an error naming the tensor.
func ImportPyTorch(r io.Reader, arch Arch, prefix string) (*Policy, error) {
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	f, err := nn.ReadSafetensors(r)
	if err != nil {
		return nil, fmt.Errorf("fdcc: importing a PyTorch actor: %w", err)
	}
	actor := newNet(arch, false, "actor", zeroRNG())
	want := map[string]bool{}
	for _, p := range actor.params {
		name := prefix + strings.TrimPrefix(p.Name, "actor.")
		want[name] = true
		v, err := f.Lookup(name, p.Shape...)
		if err != nil {
			return nil, fmt.Errorf("fdcc: importing a PyTorch actor: %w", err)
		}
		copy(p.Value, v)
	}
	for _, t := range f.Tensors {
		if strings.HasPrefix(t.Name, prefix) && !want[t.Name] {
			return nil, fmt.Errorf("fdcc: importing a PyTorch actor: tensor %s is not part of the %+v actor", t.Name, arch)
		}
	}
	return &Policy{arch: arch, actor: actor}, nil
}

// PyTorchHidden is the hidden width of the PyTorch LSTM-TD3 actor in
// data (safetensors) under prefix, read from its pre-LSTM layer's weight
// (shape [hidden, obs]); obs is checked.
func PyTorchHidden(data []byte, prefix string, obs int) (int, error) {
	f, err := nn.ReadSafetensors(bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("fdcc: importing a PyTorch actor: %w", err)
	}
	name := prefix + "mem_pre_lstm_layers.0.weight"
	for _, t := range f.Tensors {
		if t.Name != name {
			continue
		}
		if len(t.Shape) != 2 || t.Shape[1] != obs {
			return 0, fmt.Errorf("fdcc: importing a PyTorch actor: tensor %s has shape %v, want [hidden, %d]", name, t.Shape, obs)
		}
		return t.Shape[0], nil
	}
	return 0, fmt.Errorf("fdcc: importing a PyTorch actor: tensor %s is missing (is the prefix %q right?)", name, prefix)
}

// zeroRNG is the stream of networks whose values are loaded over their
// initialisation.
func zeroRNG() *rand.Rand { return rand.New(rand.NewPCG(0, 0)) }

// loadStrict loads ps from f's tensors named prefix + name and rejects
// any tensor of f that is not one of them.
func loadStrict(f *nn.File, ps nn.Params, prefix string) error {
	if err := ps.Load(f, prefix); err != nil {
		return err
	}
	if len(f.Tensors) != len(ps) {
		want := map[string]bool{}
		for _, p := range ps {
			want[prefix+p.Name] = true
		}
		for _, t := range f.Tensors {
			if !want[t.Name] {
				return fmt.Errorf("tensor %s is unexpected", t.Name)
			}
		}
	}
	return nil
}

// checkpointTensors lists every tensor of t's state, sharing its memory.
func (t *TD3) checkpointTensors() []nn.Tensor {
	var ts []nn.Tensor
	for _, n := range []*net{t.actor, t.q1, t.q2} {
		ts = append(ts, n.params.Tensors("")...)
	}
	for _, n := range []*net{t.targActor, t.targQ1, t.targQ2} {
		ts = append(ts, n.params.Tensors(prefixTarget)...)
	}
	ts = append(ts, t.piOpt.Tensors(prefixPiOpt)...)
	return append(ts, t.qOpt.Tensors(prefixQOpt)...)
}

// SaveCheckpoint writes the whole learner: the networks, their targets,
// both optimisers' moments and step counts, the hyperparameters, the
// number of updates and the state of the target-noise stream, so that
// LoadCheckpoint resumes training bit for bit. meta is stored alongside
// (keys starting with "fdcc." are reserved).
func SaveCheckpoint(w io.Writer, t *TD3, meta map[string]string) error {
	m, err := header(meta, formatCheckpoint, t.arch)
	if err != nil {
		return err
	}
	c := t.cfg
	m[metaPolyak] = formatFloat(c.Polyak)
	m[metaPiLR] = formatFloat(c.PiLR)
	m[metaQLR] = formatFloat(c.QLR)
	m[metaTargetNoise] = formatFloat(c.TargetNoise)
	m[metaNoiseClip] = formatFloat(c.NoiseClip)
	m[metaPolicyDelay] = strconv.Itoa(c.PolicyDelay)
	m[metaPreAct] = formatFloat(c.PreActPenalty)
	if c.AdamEps != 0 {
		m[metaAdamEps] = formatFloat(c.AdamEps)
	}
	m[metaUpdates] = strconv.Itoa(t.updates)
	state, err := t.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("fdcc: saving the noise stream: %w", err)
	}
	m[metaRNG] = hex.EncodeToString(state)
	if err := nn.WriteSafetensors(w, t.checkpointTensors(), m); err != nil {
		return fmt.Errorf("fdcc: saving a checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint reads a learner SaveCheckpoint wrote, with the file's
// whole metadata. Every tensor is checked: missing, of the wrong shape,
// unexpected or not finite is an error naming it.
func LoadCheckpoint(r io.Reader) (*TD3, map[string]string, error) {
	f, err := nn.ReadSafetensors(r)
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: loading a checkpoint: %w", err)
	}
	t, err := checkpointFrom(f)
	if err != nil {
		return nil, nil, fmt.Errorf("fdcc: loading a checkpoint: %w", err)
	}
	return t, f.Meta, nil
}

func checkpointFrom(f *nn.File) (*TD3, error) {
	m := f.Meta
	if got := m[metaFormat]; got != formatCheckpoint {
		return nil, fmt.Errorf("format %q, want %q", got, formatCheckpoint)
	}
	arch, err := archFromMeta(m)
	if err != nil {
		return nil, err
	}
	var c TD3Config
	for _, v := range []struct {
		key string
		dst *float64
	}{
		{metaPolyak, &c.Polyak}, {metaPiLR, &c.PiLR}, {metaQLR, &c.QLR},
		{metaTargetNoise, &c.TargetNoise}, {metaNoiseClip, &c.NoiseClip},
	} {
		if *v.dst, err = metaFloat(m, v.key); err != nil {
			return nil, err
		}
	}
	if c.PolicyDelay, err = metaInt(m, metaPolicyDelay); err != nil {
		return nil, err
	}
	if _, ok := m[metaPreAct]; ok {
		if c.PreActPenalty, err = metaFloat(m, metaPreAct); err != nil {
			return nil, err
		}
	}
	if _, ok := m[metaAdamEps]; ok {
		if c.AdamEps, err = metaFloat(m, metaAdamEps); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, err := NewTD3(arch, c, 0)
	if err != nil {
		return nil, err
	}
	if t.updates, err = metaInt(m, metaUpdates); err != nil {
		return nil, err
	}
	if t.updates < 0 {
		return nil, fmt.Errorf("metadata %s: %d updates", metaUpdates, t.updates)
	}
	state, err := hex.DecodeString(m[metaRNG])
	if err != nil {
		return nil, fmt.Errorf("metadata %s: %w", metaRNG, err)
	}
	if err := t.pcg.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", metaRNG, err)
	}
	ts := t.checkpointTensors()
	want := make(map[string]bool, len(ts))
	for _, x := range ts {
		want[x.Name] = true
	}
	var extra []string
	for _, x := range f.Tensors {
		if !want[x.Name] {
			extra = append(extra, x.Name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("tensor %s is unexpected", extra[0])
	}
	for _, n := range []*net{t.actor, t.q1, t.q2} {
		if err := n.params.Load(f, ""); err != nil {
			return nil, err
		}
	}
	for _, n := range []*net{t.targActor, t.targQ1, t.targQ2} {
		if err := n.params.Load(f, prefixTarget); err != nil {
			return nil, err
		}
	}
	if err := t.piOpt.Load(f, prefixPiOpt); err != nil {
		return nil, err
	}
	if err := t.qOpt.Load(f, prefixQOpt); err != nil {
		return nil, err
	}
	return t, nil
}
