package rl

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"cclab/cc/fdcc"
)

// A checkpoint is a folder: learner.safetensors (networks, targets, Adam
// moments: fdcc.SaveCheckpoint), replay.gob (the replay memory) and
// trainer.json (the configuration, episodes played, the trainer's random
// stream and the learning curve). Resuming from it continues the run
// exactly as if it had not stopped.

type trainerState struct {
	Config  Config     `json:"config"`
	Episode int        `json:"episode"`
	RNG     []byte     `json:"rng"`
	WallNS  int64      `json:"wallNs"`
	Curve   []Progress `json:"curve"`
	// The best policy so far is best.safetensors beside this file.
	BestScore float64 `json:"bestScore,omitempty"`
	BestEp    int     `json:"bestEpisode,omitempty"`
}

// Save writes a checkpoint into dir (made if missing), replacing files
// atomically one by one.
func (t *Trainer) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	var learner bytes.Buffer
	if err := fdcc.SaveCheckpoint(&learner, t.td3, map[string]string{"algo": t.cfg.Algo}); err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	var replay bytes.Buffer
	if err := gob.NewEncoder(&replay).Encode(t.replay.trajs); err != nil {
		return fmt.Errorf("rl: checkpoint: replay: %w", err)
	}
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{{"learner.safetensors", learner.Bytes()}, {"replay.gob", replay.Bytes()}}
	state := trainerState{Config: t.cfg, Episode: t.ep, RNG: rng, WallNS: int64(t.wall), Curve: t.curve}
	if t.best != nil {
		var b bytes.Buffer
		if err := fdcc.SavePolicy(&b, t.best, nil); err != nil {
			return fmt.Errorf("rl: checkpoint: best policy: %w", err)
		}
		files = append(files, struct {
			name string
			data []byte
		}{"best.safetensors", b.Bytes()})
		state.BestScore, state.BestEp = t.bestScore, t.bestEp
	}
	st, err := json.MarshalIndent(state, "", " ")
	if err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	files = append(files, struct {
		name string
		data []byte
	}{"trainer.json", st})
	for _, f := range files {
		if err := writeAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// Resume loads the checkpoint in dir. Episodes, when > 0, replaces the
// total number of episodes (to train a finished run further).
func Resume(dir string, episodes int) (*Trainer, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "trainer.json"))
	if err != nil {
		return nil, fmt.Errorf("rl: resume: %w", err)
	}
	var st trainerState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("rl: resume: trainer.json: %w", err)
	}
	if episodes > 0 {
		if episodes < st.Episode {
			return nil, fmt.Errorf("rl: resume: episodes: %d, but the checkpoint has played %d already", episodes, st.Episode)
		}
		st.Config.Episodes = episodes
	}
	if st.Config.Method == "" {
		// Checkpoints written before ADPG were all TD3's.
		st.Config.Method = "td3"
	}
	t, err := NewTrainer(st.Config)
	if err != nil {
		return nil, fmt.Errorf("rl: resume: %w", err)
	}
	f, err := os.Open(filepath.Join(dir, "learner.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("rl: resume: %w", err)
	}
	defer f.Close()
	td3, _, err := fdcc.LoadCheckpoint(f)
	if err != nil {
		return nil, fmt.Errorf("rl: resume: learner.safetensors: %w", err)
	}
	if td3.Arch() != t.arch {
		return nil, fmt.Errorf("rl: resume: learner.safetensors holds a %+v network, trainer.json says %+v", td3.Arch(), t.arch)
	}
	t.td3 = td3
	g, err := os.Open(filepath.Join(dir, "replay.gob"))
	if err != nil {
		return nil, fmt.Errorf("rl: resume: %w", err)
	}
	defer g.Close()
	var trajs []Trajectory
	if err := gob.NewDecoder(g).Decode(&trajs); err != nil {
		return nil, fmt.Errorf("rl: resume: replay.gob: %w", err)
	}
	t.replay.Add(trajs)
	pcg := &rand.PCG{}
	if err := pcg.UnmarshalBinary(st.RNG); err != nil {
		return nil, fmt.Errorf("rl: resume: trainer.json rng: %w", err)
	}
	t.pcg, t.rng = pcg, rand.New(pcg)
	t.ep, t.curve = st.Episode, st.Curve
	if st.BestEp > 0 {
		b, err := os.Open(filepath.Join(dir, "best.safetensors"))
		if err != nil {
			return nil, fmt.Errorf("rl: resume: %w", err)
		}
		defer b.Close()
		if t.best, _, err = fdcc.LoadPolicy(b); err != nil {
			return nil, fmt.Errorf("rl: resume: best.safetensors: %w", err)
		}
		t.bestScore, t.bestEp = st.BestScore, st.BestEp
	}
	t.wall = time.Duration(st.WallNS)
	return t, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rl: checkpoint: %w", err)
	}
	return nil
}
