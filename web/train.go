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
}
