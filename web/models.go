package web

// Card is one scenario of the library (or a stored one) on the home page.
type Card struct {
	ID, Library, Name, Description string
	Paper                          string // the work it reproduces, "" if none
	Algorithm, Kind                string
	Hosts, Flows                   int
	Builtin                        bool
	Sketch                         Topo
	// Lazy: the sketch is drawn when the card scrolls into view (GET
	// /ui/sketch/{id}) instead of in the page.
	Lazy bool
	// Look says what to watch; Takes how long a run is expected to take
	// ("about 2 s"); Wall is that estimate in seconds (the order in a topic).
	Look, Takes string
	Wall        float64
}

// Topic is one group of the library on the home page.
type Topic struct {
	Title, Intro string
	Cards        []Card
}

// RunRow is one run in a list.
type RunRow struct {
	ID, ScenarioID, Name, Algorithm, Status, Created string
	Progress                                         float64
	Pinned                                           bool
}

// Home is the home page.
type Home struct {
	Featured []Card // the class's exercises, in the instructor's order
	Library  []Card
	Topics   []Topic // the library in topics, for a newcomer (empty: Library as is)
	Stored   []Card
	Runs     []RunRow
}

// Param is one algorithm parameter of the registry.
type Param struct {
	Name, Unit, Help, Kind string
	Default, Min, Max      float64
	Live                   bool
}

// Preset is a named parameter set.
type Preset struct {
	Name, Help string
	Values     map[string]float64
}

// Algo is one algorithm of the registry.
type Algo struct {
	Name, Title, Help string
	Params            []Param
	Presets           []Preset
	// Learned algorithms (fdcc, rlcc) decide with a trained policy:
	// "default" (the shipped one) or a stored one, by name (Policies).
	Learned  bool
	Policies []string
}

// Lab is the lab page: a scenario ready to edit and run.
type Lab struct {
	ScenarioID   string // "" for a new scenario
	Name         string
	Builtin      bool
	ScenarioJSON string // the normalised scenario, for the editor
	Algorithms   []Algo
	CDFs         []string
	Topo         Topo
	RunID        string // a run to attach to (?run=)
	// Instructor: the viewer may feature scenarios for the class
	// (Featured: the featured ids).
	Instructor bool
	Featured   []string
	// Parent is the scenario of the run a ?from= lab starts from: what it
	// saves was edited from it (classview.go).
	Parent string
}

// Row is one line of a summary table.
type Row struct {
	Label, Value string
}

// SizeRow is one flow-size bucket of the FCT slowdown table.
type SizeRow struct {
	Bucket              string
	Count               int
	Mean, P50, P95, P99 string
}

// RunPage is a stored (or running) run.
type RunPage struct {
	Run     RunRow
	Error   string
	Seed    string
	Params  []Row
	Summary []Row
	Sizes   []SizeRow
	Changes []Row
	// Current is the parameters with the live changes so far applied: the
	// old values of a change the page is told of while open.
	Current     map[string]float64
	Topo        Topo
	Terminal    bool
	CodeVersion string
	// Mine: the viewer may change the run (its owner, or an instructor);
	// Speed is its pace ("max" or µs of simulated time per wall second).
	Mine  bool
	Speed string
}

// CompareCell is one value of the comparison table.
type CompareCell struct {
	Value string
	Best  bool
}

// CompareCol is one compared run's column: its label names the algorithm
// (and the preset, policy or parameters that tell apart runs of one
// algorithm).
type CompareCol struct {
	ID, ScenarioID, Name, Label, Status string
	Note                                string // "the original, as it ran" or "its defaults" after "run with every algorithm"
}

// CompareParam is one parameter of a compared run; Differs marks a value
// another run has otherwise.
type CompareParam struct {
	Name, Value string
	Differs     bool
}

// CompareParams are one compared run's parameters as it started, and its
// live changes ("ai: 20 → 40 @ 3 µs"), in the order they were made.
type CompareParams struct {
	Items   []CompareParam
	Changes []string
}

// CompareRow is one metric across the compared runs.
type CompareRow struct {
	Label, Better string
	Cells         []CompareCell
}

// ComparePage compares runs side by side.
type ComparePage struct {
	IDs    string // comma-separated, for the scripts
	Runs   []RunRow
	Rows   []CompareRow
	Recent []RunRow // to pick from
	// ScenarioID is set when every compared run shares a scenario: the
	// page then offers to run it with every algorithm, and marks the best
	// value of each row (SameScenario).
	ScenarioID   string
	SameScenario bool
	Cols         []CompareCol    // one per run
	Params       []CompareParams // one per run
	RunAllFrom   string          // the run "run with every algorithm" keeps as one of the compared runs
	Pending      bool            // a run is not done (still going, stopped or failed): no value is marked best
	Defaults     bool            // the runs after the first were started with their algorithms' defaults
}

// ClassOwner is one owner of runs in the class view.
type ClassOwner struct {
	Owner                          string
	Runs, Active, Finished, Failed int
	Latest                         string // the id of its newest run
}

// LimitField is one class limit in the instructor's form.
type LimitField struct {
	Name, Label, Help, Value string
}

// Featured is one featured scenario (Name "" when it no longer exists).
type Featured struct {
	ID, Name string
}

// ClassPage is the instructor's class view; for anyone else only how to
// sign in (Instructor false, nothing else set).
type ClassPage struct {
	Instructor      bool
	Owners          []ClassOwner
	Running, Queued int
	Limits          []LimitField
	Featured        []Featured
}
