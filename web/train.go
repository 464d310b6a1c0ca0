package web

// TrainPage is the training page's data: the form's defaults and caps
// (the server's, so the page and the API agree).
type TrainPage struct {
	Episodes      int    `json:"episodes"`
	Hidden        int    `json:"hidden"`
	Seed          uint64 `json:"seed"`
	StageEpisodes int    `json:"stageEpisodes"`
	Stages        string `json:"stages"`
	Size          string `json:"size"`
	MaxEpisodes   int    `json:"maxEpisodes"`
	MaxHidden     int    `json:"maxHidden"`
	MaxFileBytes  int    `json:"maxFileBytes"`
	// Algos are each algorithm's defaults (the form's fields, filled in
	// when the algorithm is chosen): `cclab train ALGO`'s.
	Algos map[string]TrainDefaults `json:"algos"`
}

// TrainDefaults are one algorithm's training defaults as the form shows
// them.
type TrainDefaults struct {
	Episodes      int    `json:"episodes"`
	Hidden        int    `json:"hidden"`
	StageEpisodes int    `json:"stageEpisodes"`
	Stages        string `json:"stages"`
	Size          string `json:"size"`
}
